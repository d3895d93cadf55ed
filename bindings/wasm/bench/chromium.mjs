// The benchmark page (index.html) in headless Chromium through chromedriver: serves the
// repository, opens the page with the paths of the installed comparison libraries and of the
// web package, waits for the results and writes report-chromium.md beside the packages.
// Run through `cargo xtask wasm-bench`.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve, startBrowser, waitFor } from "../tests/page/webdriver.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const dir = process.env.QUABLA_BENCH_DIR;
const urlPath = (p) => `/${path.relative(root, p).split(path.sep).join("/")}`;
if (urlPath(dir).startsWith("/..")) throw new Error(`${dir} must lie inside ${root}`);

const server = await serve(root);
const browser = await startBrowser();
try {
  const query = new URLSearchParams({
    modules: urlPath(path.join(dir, "node_modules")),
    pkg: urlPath(path.join(root, "bindings/wasm/www/pkg")),
  });
  await browser.goto(`${server.url}/bindings/wasm/bench/index.html?${query}`);
  const r = await waitFor(browser, "return window.benchResult ?? null", 15 * 60 * 1000);
  for (const line of await browser.logs()) console.log(line);
  if (r.error) throw new Error(`the benchmark page failed: ${r.error}`);
  fs.writeFileSync(path.join(dir, "report-chromium.md"), r.md);
  console.log(r.md);
} finally {
  await browser.close();
  server.close();
}
