/**
 * Deterministic, varied memory texts and queries for the speed bench, generated from a
 * seed (no copied data). The vocabulary mixes rare tokens (names, places, numbers) with
 * common words, and uses a few words of the fake embedder's synonym groups (dog/canine,
 * car/vehicle, film/movie, doctor/physician, happy/glad) so both search paths get work.
 */

/** Sixteen topic words the load and soak benches build their memory texts and queries from. */
export const TOPIC_WORDS = [
  "kitten",
  "vet",
  "pasta",
  "cheese",
  "train",
  "paris",
  "garden",
  "tomato",
  "budget",
  "invoice",
  "guitar",
  "lesson",
  "river",
  "hiking",
  "coffee",
  "deadline",
];

/** mulberry32: a small, fast, seedable PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES =
  "Maya Liam Priya Jonas Aisha Mateo Chloe Kenji Sofia Omar Hannah Lucas Amara Felix Ingrid Rahul Elena Tomasz Yuki Grace Diego Nadia Oliver Zara Henrik Leila Samuel Mei Caleb Fatima Noah Beatriz Arjun Clara Dmitri Imani Theo Rosa Kwame Alice Victor Nora Emeka Lena Marco Sana Julian Ava Tariq Freya".split(
    " ",
  );
const SURNAMES =
  "Patel Okafor Lindqvist Moreau Nakamura Schmidt Alvarez Kowalski Haddad Brennan Rossi Tanaka Mensah Novak Fischer Duarte Ivanova Chen Larsen Romero Adeyemi Costa Weber Sato Kaur Dubois Murphy Silva Jansen Yilmaz".split(
    " ",
  );
const RELATIONS =
  "sister brother mother father daughter son cousin aunt uncle grandmother neighbor roommate coworker manager best friend landlord piano teacher"
    .split(" ")
    .map((r) => (r === "best" ? "best friend" : r))
    .filter((r) => r !== "friend");
const CITIES =
  "Lisbon Osaka Nairobi Toronto Krakow Valparaiso Bergen Marrakesh Tbilisi Hanoi Edinburgh Austin Ljubljana Cusco Reykjavik Porto Seville Hobart Tallinn Montreal Kyoto Bogota Dubrovnik Chiang-Mai Wellington Galway Zanzibar Salzburg Oaxaca Quebec".split(
    " ",
  );
const PLACES =
  "the farmers market|the climbing gym|the public library|the community garden|the ramen place on 5th|the dog park|the laundromat|the train station|the bakery near the office|the swimming pool|the hardware store|the vet clinic|the co-working space|the art museum|the bike shop".split(
    "|",
  );
const ACTIVITIES =
  "pottery class|salsa dancing|rock climbing|a sourdough workshop|trail running|chess club|watercolor painting|a Spanish course|choir practice|kayaking|a coding bootcamp|yoga on Sundays|birdwatching|woodworking|a book club|tennis lessons|a photography walk|volunteering at the food bank|learning the cello|marathon training".split(
    "|",
  );
const FOODS =
  "dark roast coffee|oat milk lattes|spicy tofu|lemon tart|mushroom risotto|green curry|blueberry pancakes|salted caramel ice cream|miso soup|falafel wraps|peach cobbler|cold brew|sparkling water|dumplings|shakshuka|avocado toast|grilled sardines|chai tea|pistachio gelato|lentil soup".split(
    "|",
  );
const PETS = "dog|puppy|canine|cat|kitten|parrot|rabbit|hound|tortoise|golden retriever".split("|");
const VEHICLES = "car|automobile|vehicle|bike|scooter|van|motorcycle|camper".split("|");
const FILMS = "film|movie|documentary|series|play|concert|cinema night".split("|");
const FEELINGS = "happy|glad|joyful|cheerful|anxious|exhausted|relieved|frustrated|excited|nervous|proud|calm".split(
  "|",
);
const DOCTORS = "doctor|physician|dentist|medic|therapist|optometrist|dermatologist".split("|");
const DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(" ");
const MONTHS = "January February March April May June July August September October November December".split(" ");
const ADJ =
  "Silent Golden Hidden Broken Distant Crimson Quiet Electric Paper Northern Velvet Winter Hollow Bright Wandering".split(
    " ",
  );
const NOUNS =
  "Harbor Garden Signal Orchard Lantern River Machine Mountain Letter Island Bridge Forest Compass Tide Engine".split(
    " ",
  );
const PROJECTS =
  "budget tracker|kitchen renovation|wedding planning|thesis draft|garden shed|quarterly report|mobile app redesign|tax return|move to a new flat|podcast launch|family reunion|grant proposal".split(
    "|",
  );
const GIFTS =
  "a wool scarf|noise-cancelling headphones|a cast iron pan|a board game|concert tickets|a fountain pen|a houseplant|a cookbook|running shoes|a vinyl record".split(
    "|",
  );

/** Clause openings that are ordinary words (not names) and lose their capital mid-sentence. */
const LOWER_FIRST = /^(My|The|We|Remind|Booked|Reading|Ran|Spent|Order|Flight|I prefer)\b/;

type Pick = <T>(list: T[]) => T;

function filler(random: () => number) {
  const pick: Pick = (list) => list[Math.floor(random() * list.length)];
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const clock = () => `${int(6, 11)}:${pick(["00", "15", "30", "45"])} ${pick(["am", "pm"])}`;
  const title = () => `The ${pick(ADJ)} ${pick(NOUNS)}`;
  const person = () => (random() < 0.5 ? pick(NAMES) : `my ${pick(RELATIONS)} ${pick(NAMES)}`);
  return { pick, int, clock, title, person };
}

/** One memory text: one to three clauses, 40–400 characters. */
export function memoryText(random: () => number): string {
  const { pick, int, clock, title, person } = filler(random);
  const clauses: Array<() => string> = [
    () => `${pick(NAMES)} moved to ${pick(CITIES)} in ${pick(MONTHS)} and started ${pick(ACTIVITIES)}`,
    () => `I prefer ${pick(FOODS)} in the morning and ${pick(FOODS)} after dinner`,
    () => `Booked an appointment with ${pick(DOCTORS)} ${pick(SURNAMES)} for ${clock()} next ${pick(DAYS)}`,
    () => `${person()} adopted a ${pick(PETS)} named ${pick(NAMES)} from the shelter`,
    () => `We watched the ${pick(FILMS)} "${title()}" on ${pick(DAYS)} and I felt ${pick(FEELINGS)} afterwards`,
    () => `The ${pick(PROJECTS)} is due on ${pick(MONTHS)} ${int(1, 28)} and ${pick(NAMES)} owns the next step`,
    () => `${person()} recommended ${pick(PLACES)} for ${pick(ACTIVITIES)}`,
    () => `My ${pick(VEHICLES)} needs new tyres; the quote from the garage was $${int(80, 900)}`,
    () => `Order #${int(10000, 99999)} for ${pick(GIFTS)} should arrive by ${pick(DAYS)}`,
    () =>
      `${pick(NAMES)} ${pick(SURNAMES)} is allergic to ${pick(FOODS).split(" ").slice(-1)[0]}, so avoid it at the party`,
    () =>
      `Flight ${pick(["UA", "LH", "TP", "KL", "NH", "AC"])} ${int(100, 9999)} to ${pick(CITIES)} leaves at ${clock()} on ${pick(MONTHS)} ${int(1, 28)}`,
    () => `I was ${pick(FEELINGS)} after ${pick(ACTIVITIES)} with ${person()}`,
    () => `${person()}'s birthday is on ${pick(MONTHS)} ${int(1, 28)}; they would like ${pick(GIFTS)}`,
    () => `Reading "${title()}" by ${pick(NAMES)} ${pick(SURNAMES)}, currently on page ${int(12, 480)}`,
    () => `Wi-Fi password at ${pick(PLACES)} is ${pick(ADJ).toLowerCase()}${int(10, 99)}${pick(NOUNS).toLowerCase()}`,
    () =>
      `${person()} works at ${pick(ADJ)} ${pick(NOUNS)} Labs in ${pick(CITIES)} as a ${pick(["nurse", "data engineer", "chef", "architect", "teacher", "lawyer", "pilot", "carpenter"])}`,
    () => `Ran ${int(3, 21)} km along the river in ${int(18, 120)} minutes`,
    () => `Remind me to call ${person()} about the ${pick(PROJECTS)} before ${pick(DAYS)}`,
    () => `The ${pick(PETS)} has a check-up at ${pick(PLACES)} on ${pick(DAYS)} at ${clock()}`,
    () => `Spent ${int(2, 14)} days in ${pick(CITIES)} with ${person()} and loved the ${pick(FOODS)}`,
  ];
  const joins = [". ", "; ", ", and ", " because "];
  const roll = random();
  const count = roll < 0.4 ? 1 : roll < 0.8 ? 2 : 3;
  let text = pick(clauses)();
  for (let i = 1; i < count; i++) {
    const next = pick(clauses)();
    const join = pick(joins);
    text += join + (join !== ". " && LOWER_FIRST.test(next) ? next[0].toLowerCase() + next.slice(1) : next);
  }
  return `${text}.`;
}

/** One search query: short keyword queries and natural questions, some with synonyms. */
export function queryText(random: () => number): string {
  const { pick, title } = filler(random);
  const queries: Array<() => string> = [
    () => `where did ${pick(NAMES)} move`,
    () => `what coffee or food do I like in the morning`,
    () => `appointment with ${pick(DOCTORS)} ${pick(SURNAMES)}`,
    () => `${pick(PETS)} adopted from the shelter`,
    () => `which ${pick(FILMS)} did we watch on ${pick(DAYS)}`,
    () => `when is the ${pick(PROJECTS)} due`,
    () => `recommendation for ${pick(ACTIVITIES)}`,
    () => `how much did the ${pick(VEHICLES)} repair cost`,
    () => `${pick(GIFTS)} order delivery`,
    () => `who is allergic to ${pick(FOODS).split(" ").slice(-1)[0]}`,
    () => `flight to ${pick(CITIES)}`,
    () => `${pick(NAMES)} birthday gift ideas`,
    () => `book "${title()}"`,
    () => `wifi password ${pick(PLACES).replace(/^the /, "")}`,
    () => `where does ${pick(NAMES)} work`,
    () => `how far did I run`,
    () => `call ${pick(NAMES)} about the ${pick(PROJECTS)}`,
    () => `trip to ${pick(CITIES)} with ${pick(RELATIONS)}`,
    () => `felt ${pick(FEELINGS)} after ${pick(ACTIVITIES)}`,
    () => `${pick(NAMES)} ${pick(SURNAMES)}`,
  ];
  return pick(queries)();
}

/** `count` memory texts from `seed`; the same seed always gives the same list. */
export function memoryTexts(seed: number, count: number): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => memoryText(random));
}

/**
 * `count` distinct queries: the server caches query vectors, and real questions rarely
 * repeat, so a repeated query would flatter the embedding time.
 */
export function queryTexts(seed: number, count: number): string[] {
  const random = seededRandom(seed ^ 0x9e3779b9);
  const { pick } = filler(random);
  const seen = new Set<string>();
  for (let attempt = 0; seen.size < count && attempt < count * 20; attempt++) {
    const query = queryText(random);
    // A second clause widens the space once the short forms are used up.
    seen.add(
      seen.has(query) ? `${query} ${pick(["and", "or", "with", "before", "after"])} ${queryText(random)}` : query,
    );
  }
  return [...seen].slice(0, count);
}
