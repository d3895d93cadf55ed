// Loads the Node build of quabla-wasm (made by `cargo xtask wasm`); QUABLA_WASM_NODE_PKG
// points elsewhere.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg =
  process.env.QUABLA_WASM_NODE_PKG ??
  path.join(here, "../../../../target/wasm/pkg-node/quabla_wasm.js");
const require = createRequire(import.meta.url);
export const q = require(pkg);
