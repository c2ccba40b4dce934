/**
 * A pure-JS BERT WordPiece tokenizer reading a Hugging Face `tokenizer.json` or a
 * `vocab.txt`, so that no native tokenizer (or transformers.js, which pulls in sharp)
 * has to ship inside the compiled binary.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type BertNormalizerOptions, UNCASED_BERT, normalizeBertText, splitBertWords } from "./bert-normalizer.ts";

/** Token ids of one batch, padded to its longest sequence, in the layout BERT ONNX graphs take. */
export interface EncodedBatch {
  inputIds: BigInt64Array;
  attentionMask: BigInt64Array;
  tokenTypeIds: BigInt64Array;
  batchSize: number;
  sequenceLength: number;
}

/** Everything besides the vocabulary that changes how text becomes ids. */
export interface WordPieceOptions {
  normalizer: BertNormalizerOptions;
  unkToken: string;
  clsToken: string;
  sepToken: string;
  padToken: string;
  /** Marks pieces that continue a word. */
  continuingSubwordPrefix: string;
  /** Longer words become one unknown token, as in BERT. */
  maxInputCharsPerWord: number;
}

const BERT_DEFAULTS: WordPieceOptions = {
  normalizer: UNCASED_BERT,
  unkToken: "[UNK]",
  clsToken: "[CLS]",
  sepToken: "[SEP]",
  padToken: "[PAD]",
  continuingSubwordPrefix: "##",
  maxInputCharsPerWord: 100,
};

// Words repeat a lot in memories; caching their pieces roughly halves tokenizing time.
const WORD_CACHE_LIMIT = 50_000;

/**
 * Greedy longest-match-first WordPiece, as BERT does it.
 *
 * @example
 * const tokenizer = await WordPieceTokenizer.fromDirectory(modelDir);
 * tokenizer.encode("hello world", 256); // [101, 7592, 2088, 102] with MiniLM's vocabulary
 */
export class WordPieceTokenizer {
  readonly options: WordPieceOptions;
  readonly unkId: number;
  readonly clsId: number;
  readonly sepId: number;
  readonly padId: number;
  private readonly vocab: Map<string, number>;
  private readonly wordCache = new Map<string, number[]>();
  private tokensById: Map<number, string> | undefined;

  constructor(vocab: Map<string, number>, options: Partial<WordPieceOptions> = {}) {
    this.vocab = vocab;
    this.options = { ...BERT_DEFAULTS, ...options };
    const idOf = (token: string): number => {
      const id = vocab.get(token);
      if (id === undefined) throw new Error(`tokenizer vocabulary has no ${token} token`);
      return id;
    };
    this.unkId = idOf(this.options.unkToken);
    this.clsId = idOf(this.options.clsToken);
    this.sepId = idOf(this.options.sepToken);
    this.padId = idOf(this.options.padToken);
  }

  /** Builds a tokenizer from a `vocab.txt` (one token a line, id = line number), uncased BERT settings. */
  static fromVocabText(text: string, options: Partial<WordPieceOptions> = {}): WordPieceTokenizer {
    const vocab = new Map<string, number>();
    const lines = text.split(/\r?\n/);
    if (lines.at(-1) === "") lines.pop();
    for (const [id, token] of lines.entries()) vocab.set(token, id);
    return new WordPieceTokenizer(vocab, options);
  }

  /** Builds a tokenizer from a parsed `tokenizer.json` whose model is WordPiece. */
  static fromTokenizerJson(json: unknown): WordPieceTokenizer {
    const config = json as TokenizerJson;
    if (config?.model?.type !== "WordPiece" || typeof config.model.vocab !== "object") {
      throw new Error(`tokenizer.json: unsupported model type ${JSON.stringify(config?.model?.type)}`);
    }
    const normalizer = config.normalizer;
    if (normalizer && normalizer.type !== "BertNormalizer") {
      throw new Error(`tokenizer.json: unsupported normalizer ${JSON.stringify(normalizer.type)}`);
    }
    const lowercase = normalizer?.lowercase ?? true;
    const specials = config.post_processor?.special_tokens ?? {};
    return new WordPieceTokenizer(new Map(Object.entries(config.model.vocab)), {
      normalizer: {
        cleanText: normalizer?.clean_text ?? true,
        handleChineseChars: normalizer?.handle_chinese_chars ?? true,
        // `null` means "strip accents when lower-casing", as in BERT.
        stripAccents: normalizer?.strip_accents ?? lowercase,
        lowercase,
      },
      unkToken: config.model.unk_token ?? BERT_DEFAULTS.unkToken,
      clsToken: specials["[CLS]"]?.tokens?.[0] ?? BERT_DEFAULTS.clsToken,
      sepToken: specials["[SEP]"]?.tokens?.[0] ?? BERT_DEFAULTS.sepToken,
      padToken: config.padding?.pad_token ?? BERT_DEFAULTS.padToken,
      continuingSubwordPrefix: config.model.continuing_subword_prefix ?? BERT_DEFAULTS.continuingSubwordPrefix,
      maxInputCharsPerWord: config.model.max_input_chars_per_word ?? BERT_DEFAULTS.maxInputCharsPerWord,
    });
  }

  /** Reads `tokenizer.json` from a model directory, or `vocab.txt` when there is none. */
  static async fromDirectory(dir: string): Promise<WordPieceTokenizer> {
    const jsonPath = join(dir, "tokenizer.json");
    if (existsSync(jsonPath)) return WordPieceTokenizer.fromTokenizerJson(JSON.parse(await readFile(jsonPath, "utf8")));
    const vocabPath = join(dir, "vocab.txt");
    if (existsSync(vocabPath)) return WordPieceTokenizer.fromVocabText(await readFile(vocabPath, "utf8"));
    throw new Error(`no tokenizer.json or vocab.txt in ${dir}`);
  }

  /** Ids of the word pieces of `text`, without [CLS]/[SEP] and without truncation. */
  tokenizeToIds(text: string): number[] {
    const ids: number[] = [];
    for (const word of splitBertWords(normalizeBertText(text, this.options.normalizer))) {
      for (const id of this.wordToIds(word)) ids.push(id);
    }
    return ids;
  }

  /** The word pieces of `text` as strings, e.g. `["un", "##aff", "##able"]`; for tests and debugging. */
  tokenize(text: string): string[] {
    this.tokensById ??= new Map(Array.from(this.vocab, ([token, id]) => [id, token]));
    return this.tokenizeToIds(text).map((id) => this.tokensById!.get(id)!);
  }

  /**
   * `[CLS] pieces [SEP]`, keeping the first `maxLength - 2` pieces.
   *
   * @param maxLength the model's maximum sequence length, special tokens included.
   */
  encode(text: string, maxLength: number): number[] {
    const pieces = this.tokenizeToIds(text);
    const room = Math.max(0, maxLength - 2);
    return [this.clsId, ...(pieces.length > room ? pieces.slice(0, room) : pieces), this.sepId];
  }

  /** Pads encoded sequences to the longest one, with attention mask and zero token types. */
  toBatch(sequences: number[][]): EncodedBatch {
    const batchSize = sequences.length;
    const sequenceLength = Math.max(0, ...sequences.map((ids) => ids.length));
    const size = batchSize * sequenceLength;
    const inputIds = new BigInt64Array(size).fill(BigInt(this.padId));
    const attentionMask = new BigInt64Array(size);
    sequences.forEach((ids, row) => {
      const offset = row * sequenceLength;
      for (let i = 0; i < ids.length; i++) {
        inputIds[offset + i] = BigInt(ids[i]);
        attentionMask[offset + i] = 1n;
      }
    });
    return { inputIds, attentionMask, tokenTypeIds: new BigInt64Array(size), batchSize, sequenceLength };
  }

  private wordToIds(word: string): number[] {
    const cached = this.wordCache.get(word);
    if (cached) return cached;
    const ids = this.splitWord(word);
    if (this.wordCache.size >= WORD_CACHE_LIMIT) this.wordCache.clear();
    this.wordCache.set(word, ids);
    return ids;
  }

  private splitWord(word: string): number[] {
    const chars = Array.from(word);
    if (chars.length > this.options.maxInputCharsPerWord) return [this.unkId];
    const ids: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (start < end) {
        const piece = chars.slice(start, end).join("");
        found = this.vocab.get(start > 0 ? this.options.continuingSubwordPrefix + piece : piece);
        if (found !== undefined) break;
        end--;
      }
      // BERT maps the whole word to [UNK] when any part of it has no piece.
      if (found === undefined) return [this.unkId];
      ids.push(found);
      start = end;
    }
    return ids;
  }
}

/** The parts of Hugging Face's `tokenizer.json` this tokenizer reads. */
interface TokenizerJson {
  model?: {
    type?: string;
    vocab?: Record<string, number>;
    unk_token?: string;
    continuing_subword_prefix?: string;
    max_input_chars_per_word?: number;
  };
  normalizer?: {
    type?: string;
    clean_text?: boolean;
    handle_chinese_chars?: boolean;
    strip_accents?: boolean | null;
    lowercase?: boolean;
  } | null;
  post_processor?: { special_tokens?: Record<string, { tokens?: string[] }> } | null;
  padding?: { pad_token?: string } | null;
}
