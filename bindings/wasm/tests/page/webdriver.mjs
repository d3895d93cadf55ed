// Just enough WebDriver (through chromedriver) and static file serving for the page tests,
// with Node's built-ins only.
import { spawn } from "node:child_process";
import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const TYPES = {
  ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript",
  ".wasm": "application/wasm", ".json": "application/json", ".css": "text/css",
};

/// Serves `root` on 127.0.0.1 (a free port); resolves to { url, close }.
export function serve(root) {
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const file = path.join(root, path.normalize(rel).replace(/^(\.\.[/\\])+/, ""));
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404); res.end("not found"); return; }
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
      res.end(data);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() })));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/// Starts chromedriver and a headless Chromium session with WebGPU enabled.
export async function startBrowser() {
  const port = 9600 + Math.floor(Math.random() * 300);
  const driver = spawn(process.env.CHROMEDRIVER ?? "/usr/bin/chromedriver", [`--port=${port}`], {
    stdio: "ignore",
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try { if ((await fetch(`${base}/status`)).ok) break; } catch { /* not up yet */ }
    if (i > 100) throw new Error("chromedriver did not start");
    await sleep(100);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "quabla-chromium-"));
  const caps = {
    capabilities: { alwaysMatch: { "goog:loggingPrefs": { browser: "ALL" }, "goog:chromeOptions": {
      binary: process.env.CHROMIUM ?? "/usr/bin/chromium",
      args: ["--headless", "--no-sandbox", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
        "--enable-unsafe-webgpu", "--window-size=1100,800", `--user-data-dir=${profile}`],
    } } },
  };
  const r = await (await fetch(`${base}/session`, {
    method: "POST", body: JSON.stringify(caps), headers: { "content-type": "application/json" },
  })).json();
  if (!r.value?.sessionId) throw new Error(`no browser session: ${JSON.stringify(r)}`);
  const s = `${base}/session/${r.value.sessionId}`;
  const call = async (method, what, body) => {
    const res = await fetch(`${s}${what}`, {
      method, body: body && JSON.stringify(body), headers: { "content-type": "application/json" },
    });
    const j = await res.json();
    if (j.value?.error) throw new Error(`${what}: ${j.value.message}`);
    return j.value;
  };
  return {
    goto: (url) => call("POST", "/url", { url }),
    eval: (script) => call("POST", "/execute/sync", { script, args: [] }),
    /// The page's console messages since the last call.
    logs: async () => (await call("POST", "/se/log", { type: "browser" })).map((e) => `${e.level} ${e.message}`),
    screenshot: async (file) => fs.writeFileSync(file, Buffer.from(await call("GET", "/screenshot"), "base64")),
    close: async () => {
      try { await call("DELETE", ""); } finally {
        driver.kill();
        fs.rmSync(profile, { recursive: true, force: true });
      }
    },
  };
}

/// Polls `script` in the page until it returns something other than null.
export async function waitFor(browser, script, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await browser.eval(script);
    if (v !== null && v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for: ${script}`);
    await sleep(500);
  }
}
