// Drives `hall web` in Debian's Chromium through Playwright: the launch URL, the board,
// an item and its tabs, answering a question from Your Office (then reading the journal
// line it wrote), a real run followed live as it streams, a setting changed from the
// form (then reading the file on disk), and a screenshot of every page.
//
// Run by tests/tests/web_browser.rs, which makes the sandbox and passes, in the
// environment: HALL_WEB_URL (the launch URL), HALL_WEB_ITEM, HALL_WEB_EVENTS (the item's
// journal file), HALL_WEB_RUN_ITEM (the item whose review the test runs once the trace
// is open), HALL_WEB_SIGNAL (a file this script writes then), HALL_WEB_CONFIG (the main
// checkout's .hallmark.toml), HALL_WEB_SHOTS (where screenshots go), CHROMIUM.
// Prints one JSON line of measurements; exits non-zero on the first failed check.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const url = env('HALL_WEB_URL');
const item = env('HALL_WEB_ITEM');
const shots = env('HALL_WEB_SHOTS');
const origin = new URL(url).origin;
fs.mkdirSync(shots, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
const page = await context.newPage();
const problems = [];
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
const shot = (name) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
const measured = {};

// The launch URL: a cookie, then the board.
const started = Date.now();
await page.goto(url);
assert.equal(new URL(page.url()).pathname, '/');
await page.waitForSelector(`tr[data-item="${item}"]`);
measured.launch_to_board_ms = Date.now() - started;
// The hostile title is text: no element made of it, no script of it ran.
const title = await page.textContent(`tr[data-item="${item}"] td:nth-child(2)`);
assert.match(title, /<script>/);
assert.equal(await page.evaluate(() => window.__pwned), undefined);
assert.equal(await page.locator('main img[src="x"]').count(), 0);
await shot('board');

// The cookie the page rides on is invisible to its scripts.
assert.equal(await page.evaluate(() => document.cookie), '');

// An item and each of its tabs.
await page.click(`tr[data-item="${item}"] a`);
await page.waitForSelector('pre[data-view=text]');
assert.match(await page.textContent('pre[data-view=text]'), new RegExp(item));
for (const tab of ['now', 'journal', 'findings', 'runs', 'gazette', 'usage']) {
  await page.goto(`${origin}/#/item/${item}/${tab}`);
  await page.waitForSelector('pre');
  await shot(`item-${tab}`);
}

// A run followed live: the trace tab is open before the review starts; the test then
// runs the loop, whose stand-in review streams its reads seconds apart, and each shows
// up with no click.
const runItem = env('HALL_WEB_RUN_ITEM');
await page.goto(`${origin}/#/item/${runItem}/trace`);
await page.waitForSelector('pre[data-view=text]');
fs.writeFileSync(env('HALL_WEB_SIGNAL'), 'trace open\n');
const trace = () => page.evaluate(() => document.querySelector('pre[data-view=text]')?.textContent || '');
await page.waitForFunction(() => (document.querySelector('pre[data-view=text]')?.textContent || '').includes('lib.txt'), null, { timeout: 60000 });
const firstSeen = await trace();
assert.ok(!firstSeen.includes('README.md'), `every step at once: ${firstSeen}`);
await page.waitForFunction(() => (document.querySelector('pre[data-view=text]')?.textContent || '').includes('check.sh'), null, { timeout: 30000 });
await shot('item-trace');
await page.waitForFunction(() => (document.querySelector('pre[data-view=text]')?.textContent || '').includes('README.md'), null, { timeout: 30000 });
measured.trace_steps_followed = 3;

// Your Office: answer the question by its option, then read the journal's line.
await page.click('a[data-route=inbox]');
await page.waitForSelector('.entry');
await shot('inbox');
await page.click('.entry button:has-text("nom")');
await page.waitForFunction(() => document.getElementById('status').textContent.includes('hall answer Q-1 nom: '), null, { timeout: 10000 });
const lines = fs.readFileSync(env('HALL_WEB_EVENTS'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const answered = lines.filter((e) => e.event === 'answered');
assert.equal(answered.length, 1);
assert.equal(answered[0].answer, 'nom');
assert.equal(answered[0].actor, 'you');
assert.equal(answered[0].via, 'web');
// The journal moved, so the page followed: the event stream redrew Your Office.
await page.waitForSelector('text=Nothing waits for you.', { timeout: 10000 });
measured.events_seen = Number(await page.evaluate(() => document.body.dataset.events || '0'));
assert.ok(measured.events_seen >= 1, 'the page got the journal line as an event');

// The other pages.
for (const route of ['history', 'usage', 'queue', 'repos']) {
  await page.click(`a[data-route=${route}]`);
  await page.waitForSelector('main pre, main img');
  await shot(route);
}

// Settings: change one value from the form, see the diff, save, and find the file on
// disk with its comments and key order kept.
const configPath = env('HALL_WEB_CONFIG');
const before = fs.readFileSync(configPath, 'utf8');
const comments = (t) => t.split('\n').filter((l) => l.includes('#'));
assert.ok(comments(before).length >= 2, 'the file under test has comments to keep');
await page.click('a[data-route=settings]');
await page.waitForSelector('form[data-settings=repo]');
await shot('settings');
const field = page.locator('form[data-settings=repo] [name="stuck_after"]');
await field.fill('3h');
await page.click('form[data-settings=repo] button:has-text("Show the change")');
await page.waitForSelector('pre[data-view=diff]');
assert.match(await page.textContent('pre[data-view=diff]'), /\+stuck_after = "3h"/);
await shot('settings-diff');
await page.click('button:has-text("Save")');
await page.waitForFunction(() => document.getElementById('status').textContent.includes('config set'), null, { timeout: 10000 });
await page.waitForFunction(() => !document.getElementById('status').classList.contains('error'));
// The save redraws the settings from the file: wait for the form that shows it, so the
// next steps don't act on the form it replaces.
await page.waitForFunction(() => document.querySelector('form[data-settings=repo] [name="stuck_after"]')?.dataset.initial === '3h', null, { timeout: 10000 });
const after = fs.readFileSync(configPath, 'utf8');
assert.match(after, /stuck_after = "3h"/);
assert.deepEqual(comments(after), comments(before), 'every comment kept');
const keys = (t) => t.split('\n').map((l) => l.split('=')[0].trim()).filter((k) => k && !k.startsWith('#') && k !== 'stuck_after');
assert.deepEqual(keys(after), keys(before), 'the other keys in their order');

// Your own settings: the policy tightened from the same schema's form, in your
// config.toml beside its [signing] table.
const userPath = env('HALL_WEB_USER_CONFIG');
await page.goto(`${origin}/#/settings`);
await page.waitForSelector('form[data-settings=user]');
await page.selectOption('form[data-settings=user] [name="policy.mode"]', 'enforce');
await page.click('form[data-settings=user] button:has-text("Show the change")');
await page.waitForFunction(() => [...document.querySelectorAll('pre[data-view=diff]')].some((p) => p.textContent.includes('+mode = "enforce"')), null, { timeout: 10000 });
await page.click('button:has-text("Save")');
await page.waitForFunction(() => document.getElementById('status').textContent.includes('--user: '), null, { timeout: 10000 });
const userAfter = fs.readFileSync(userPath, 'utf8');
assert.match(userAfter, /\[policy\]\s*\nmode = "enforce"/);
assert.match(userAfter, /\[signing\]\s*\nprincipal = /);

assert.deepEqual(problems, []);
await browser.close();
console.log(JSON.stringify(measured));
