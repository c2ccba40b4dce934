/** A `.bin` imported `with { type: "file" }` (embedded by `bun build --compile`): the import is a path. */
declare module "*.bin" {
  const path: string;
  export default path;
}
