/** onnxruntime-node's native files, imported `with { type: "file" }`: the import is a path. */
declare module "onnxruntime-node/bin/*" {
  const path: string;
  export default path;
}
