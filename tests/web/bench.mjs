// The web app's cold page load in Chromium, for host/hall/benches/web.rs: each run is a new
// browser context (no cache, no storage) given the session cookie, opening `/` until the
// board's first drawing (the page's `board-drawn` mark). Prints one JSON line of
// milliseconds per run: first contentful paint and the board drawn.
//
// Environment: HALL_WEB_ORIGIN, HALL_WEB_COOKIE (`hall_session=…`), HALL_WEB_RUNS,
// CHROMIUM.
import { chromium } from 'playwright-core';

const origin = process.env.HALL_WEB_ORIGIN;
const [name, value] = process.env.HALL_WEB_COOKIE.split('=');
const runs = Number(process.env.HALL_WEB_RUNS || '10');
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const out = { paint: [], board: [] };
for (let i = 0; i < runs + 1; i += 1) {
  const context = await browser.newContext();
  await context.addCookies([{ name, value, url: origin }]);
  const page = await context.newPage();
  await page.goto(origin + '/');
  await page.waitForFunction(() => performance.getEntriesByName('board-drawn').length > 0, null, { timeout: 30000 });
  const t = await page.evaluate(() => ({
    board: performance.getEntriesByName('board-drawn')[0].startTime,
    paint: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0,
  }));
  // The first run warms the browser process itself up; it is not counted.
  if (i > 0) {
    out.board.push(t.board);
    out.paint.push(t.paint);
  }
  await context.close();
}
await browser.close();
console.log(JSON.stringify(out));
