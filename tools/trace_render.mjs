// Render a Chrome trace once in a real browser and report what its viewer imported.
//
// The profiler's tests validate ember's traces against the Trace Event Format; this checks, by hand, that a
// browser's trace viewer opens one. Chromium's own viewer (catapult's trace-viewer, the code behind
// chrome://tracing) is built into one HTML file by catapult's `tracing/bin/trace2html`; headless Chromium
// (npm's @sparticuz/chromium, driven by puppeteer-core) loads it, and the viewer's model is queried.
//
//   npm install @sparticuz/chromium puppeteer-core        # in a scratch directory, with this file copied there
//   python3 <catapult>/tracing/bin/trace2html trace.json --output trace.html   # needs html5lib
//   node trace_render.mjs $PWD/trace.html trace.png
//
// It prints the number of slices the viewer built, the first names, its import warnings and page errors.
import chromium from "@sparticuz/chromium";
import puppeteer from "puppeteer-core";
const [html, png] = process.argv.slice(2);
const browser = await puppeteer.launch({args: chromium.args, executablePath: await chromium.executablePath(), headless: true});
const page = await browser.newPage();
const errors = [];
page.on("pageerror", e => errors.push(e.message));
await page.setViewport({width: 1400, height: 700});
await page.goto("file://" + html, {waitUntil: "load", timeout: 60000});
await new Promise(r => setTimeout(r, 4000));
const info = await page.evaluate(() => {
  const view = document.querySelector("tr-ui-timeline-view");
  if (!view || !view.model) return {ok: false};
  const names = [];
  let slices = 0;
  for (const t of view.model.getAllThreads()) {
    for (const s of t.sliceGroup.slices) { slices++; if (names.length < 8) names.push(s.title); }
  }
  return {ok: true, slices, names, importWarnings: view.model.importWarnings.map(w => w.message)};
});
console.log(JSON.stringify({info, errors}));
await page.screenshot({path: png});
await browser.close();
