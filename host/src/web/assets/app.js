// Hallmark's web app. Every view is a hall command's reply or the board from the
// index; every action is a hall command's argv, sent to /api/run. Text only ever
// reaches the page through textContent, so a journal's words are never markup.
'use strict';

const S = { csrf: null, repo: '', events: 0, position: null, timer: null, follow: null };
const main = () => document.getElementById('main');

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'onclick') node.addEventListener('click', v);
    else if (k === 'onsubmit') node.addEventListener('submit', v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function status(text, bad) {
  const s = document.getElementById('status');
  s.textContent = text;
  s.className = bad ? 'error' : '';
}

function shown(argv) {
  return 'hall ' + argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

async function getJSON(url) {
  const r = await fetch(url, { credentials: 'same-origin' });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error((body.error && body.error.message) || r.statusText);
  return body;
}

// A read command: its reply's JSON and text.
async function view(argv) {
  const body = await getJSON('/api/view?argv=' + encodeURIComponent(JSON.stringify(argv)));
  if (!body.ok) throw new Error(body.error.message + (body.error.next.length ? '\nnext: ' + body.error.next.join(' | ') : ''));
  return body;
}

// An action: POSTed with the CSRF token; the status bar names the command.
async function act(argv) {
  status(shown(argv) + ' …');
  try {
    const r = await fetch('/api/run', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Hall-CSRF': S.csrf || '' },
      body: JSON.stringify({ argv }),
    });
    const body = await r.json().catch(() => ({}));
    if (!r.ok || !body.ok) {
      const e = body.error || {};
      status(shown(argv) + ': ' + (e.message || r.statusText) + (e.next && e.next.length ? '  next: ' + e.next.join(' | ') : ''), true);
      return null;
    }
    status(shown(argv) + ': ' + (body.text || 'done').split('\n')[0]);
    refresh();
    return body;
  } catch (err) {
    status(shown(argv) + ': ' + err.message, true);
    return null;
  }
}

function pre(text) {
  return el('pre', { 'data-view': 'text' }, text);
}

async function textView(argv) {
  try {
    const r = await view(argv);
    status(shown(argv));
    return pre(r.text);
  } catch (err) {
    const node = pre(err.message);
    node.classList.add('error');
    return node;
  }
}

function itemLink(id) {
  return el('a', { href: '#/item/' + id + '/now' }, id);
}

// ------------------------------------------------------------------ the views

// The board's data, taken once from the request the page preloads.
let preloaded = ['', 'board'].includes(location.hash.split('/')[1] || '') ? getJSON('/api/board') : null;

async function board() {
  const b = await (preloaded || getJSON('/api/board'));
  preloaded = null;
  const root = el('div', {});
  document.getElementById('inbox-count').textContent = b.inbox.length ? '(' + b.inbox.length + ')' : '';
  for (const place of b.places) {
    const rows = b.items.filter((i) => i.place === place);
    if (!rows.length) continue;
    root.append(el('h2', {}, place + ' (' + rows.length + ')'));
    root.append(el('table', { 'data-place': place },
      el('tr', {}, el('th', {}, 'item'), el('th', {}, 'title'), el('th', {}, 'state'), el('th', {}, 'hold'), el('th', {}, 'round')),
      rows.map((r) => el('tr', { 'data-item': r.id },
        el('td', {}, itemLink(r.id)), el('td', {}, r.title), el('td', {}, r.state), el('td', {}, r.hold || ''), el('td', {}, r.round)))));
  }
  if (!b.items.length) root.append(el('p', { class: 'muted' }, 'No items yet: `hall new "…"` makes one.'));
  status('board: ' + b.items.length + ' items');
  return root;
}

async function inbox() {
  const b = await getJSON('/api/board');
  const root = el('div', {}, el('h2', {}, 'Your Office'));
  if (!b.inbox.length) root.append(el('p', { class: 'muted' }, 'Nothing waits for you.'));
  for (const e of b.inbox) {
    const box = el('div', { class: 'entry', 'data-entry': e.n },
      el('div', {}, el('strong', {}, e.kind), ' ', e.item ? itemLink(e.item) : '', ' ', el('span', { class: 'muted' }, 'since ' + e.since)),
      el('div', {}, e.text));
    const buttons = el('div', { class: 'actions' });
    if (e.kind === 'question') {
      const qid = e.key.replace(/^question:/, '');
      for (const option of b.questions[qid] || []) {
        buttons.append(el('button', { onclick: () => act(['answer', qid, option]) }, option));
      }
      const input = el('input', { type: 'text', placeholder: 'your answer', 'aria-label': 'answer to ' + qid });
      buttons.append(el('form', { onsubmit: (ev) => { ev.preventDefault(); if (input.value.trim()) act(['answer', qid, input.value.trim()]); } },
        input, ' ', el('button', { type: 'submit' }, 'Answer')));
    } else if (e.item) {
      buttons.append(el('button', { onclick: () => act(['retry', e.item]) }, 'Retry'));
      buttons.append(el('button', { onclick: () => act(['pull-back', e.item]) }, 'Pull back'));
    }
    buttons.append(el('button', { onclick: () => act(['inbox', String(e.n), '--dismiss']) }, 'Dismiss'));
    box.append(buttons);
    root.append(box);
  }
  status('hall inbox: ' + b.inbox.length);
  return root;
}

const TABS = {
  now: (id) => ['status', id],
  journal: (id) => ['log', id],
  findings: (id) => ['findings', id],
  runs: (id) => ['trace', id, '--list'],
  trace: (id) => ['trace', id],
  gazette: (id) => ['gazette', id, '--text'],
  usage: (id) => ['usage', '--item', id],
};

async function item(id, tab) {
  tab = TABS[tab] ? tab : 'now';
  const root = el('div', {}, el('h2', {}, id));
  root.append(el('div', { class: 'tabs' }, Object.keys(TABS).map((t) =>
    el('a', { href: '#/item/' + id + '/' + t, class: t === tab ? 'here' : null }, t))));
  root.append(el('div', { class: 'actions' },
    el('button', { onclick: () => act(['ready', id]) }, 'Ready'),
    el('button', { onclick: () => act(['pull-back', id]) }, 'Pull back'),
    el('button', { onclick: () => act(['retry', id]) }, 'Retry'),
    el('button', { onclick: () => { const why = prompt('Why drop ' + id + '?'); if (why && why.trim()) act(['drop', id, '--reason', why.trim()]); } }, 'Drop…')));
  const argv = TABS[tab](id);
  root.append(await textView(argv));
  if (tab === 'findings') {
    try {
      const f = await view(argv);
      for (const c of f.json.checks || []) {
        if (c.log) root.append(el('div', { class: 'actions' }, el('button', { onclick: async () => { root.append(await textView(['run', '--show', c.log])); } }, 'log of ' + c.check)));
      }
    } catch (_) { /* the text above already says what failed */ }
  }
  if (tab === 'trace') {
    // Followed live: the newest run's steps, read again every second while open (the
    // first run may not have started yet).
    S.follow = setInterval(async () => {
      const node = main().querySelector('pre[data-view=text]');
      if (!node) return;
      try {
        node.textContent = (await view(argv)).text;
        node.classList.remove('error');
      } catch (err) {
        node.textContent = err.message;
        node.classList.add('error');
      }
    }, 1000);
  }
  return root;
}

async function usage() {
  const root = el('div', {}, el('h2', {}, 'Usage'));
  for (const by of ['day', 'item', 'model', 'role', 'station']) {
    root.append(el('a', { href: '#/usage/' + by }, by), ' ');
  }
  const by = (location.hash.split('/')[2]) || 'day';
  root.append(el('img', { class: 'chart', alt: 'usage by ' + by, src: '/api/chart/usage?by=' + encodeURIComponent(by) }));
  root.append(await textView(['usage', '--by', by]));
  return root;
}


// ------------------------------------------------------------------ settings

// The JSON Schema node behind `$ref`s and `anyOf: [{$ref}, null]`.
function resolve(schema, node) {
  for (let i = 0; node && i < 8; i += 1) {
    if (node.$ref) node = schema.$defs[node.$ref.split('/').pop()];
    else if (node.anyOf) node = node.anyOf.find((a) => a.type !== 'null') || node;
    else break;
  }
  return node || {};
}

// The values a setting may take, when it is one of a list (`enum`, or `oneOf` consts).
function choices(node) {
  if (node.enum) return node.enum.map(String);
  if (Array.isArray(node.oneOf) && node.oneOf.every((o) => o.const !== undefined)) return node.oneOf.map((o) => String(o.const));
  return null;
}

function kindOf(node) {
  const t = Array.isArray(node.type) ? node.type.find((x) => x !== 'null') : node.type;
  return choices(node) ? 'enum' : t;
}

// One input for a scalar setting: its current value in the file, its default shown
// when the file leaves it out.
function field(name, node, current) {
  const kind = kindOf(node);
  const shownDefault = node.default === undefined || node.default === null ? '' : (Array.isArray(node.default) ? node.default.join(', ') : String(node.default));
  let input;
  if (kind === 'boolean' || kind === 'enum') {
    const options = kind === 'boolean' ? ['true', 'false'] : choices(node);
    input = el('select', { name }, el('option', { value: '' }, shownDefault ? '(default: ' + shownDefault + ')' : '(unset)'),
      options.map((o) => el('option', { value: o, selected: current !== undefined && String(current) === o }, o)));
  } else {
    const value = current === undefined ? '' : (Array.isArray(current) ? current.join(', ') : String(current));
    input = el('input', { type: 'text', name, value, placeholder: shownDefault });
  }
  input.dataset.initial = input.value;
  return el('tr', {}, el('td', {}, el('label', { title: node.description || '' }, name)), el('td', {}, input), el('td', { class: 'muted' }, (node.description || '').split('\n')[0]));
}

// The rows of a settings form: every scalar setting of the schema (and of its tables),
// or of the tables `only` names.
function settingsForm(schema, values, only) {
  const rows = [];
  const scalar = (n) => ['string', 'integer', 'number', 'boolean', 'enum', 'array'].includes(kindOf(n)) && !(kindOf(n) === 'array' && resolve(schema, n.items || {}).type !== 'string');
  for (const [key, raw] of Object.entries(schema.properties || {})) {
    if (only && !only.includes(key)) continue;
    const node = resolve(schema, raw);
    if (node.properties) {
      for (const [sub, rawSub] of Object.entries(node.properties)) {
        const leaf = resolve(schema, rawSub);
        if (scalar(leaf)) rows.push(field(key + '.' + sub, { ...leaf, default: leaf.default ?? (raw.default || {})[sub] }, (values[key] || {})[sub]));
      }
    } else if (scalar(node)) {
      rows.push(field(key, node, values[key]));
    }
  }
  return rows;
}

// The changed inputs as KEY=VALUE words for `hall config set`.
function changes(form) {
  return [...form.querySelectorAll('input[name], select[name]')]
    .filter((i) => i.value !== i.dataset.initial && i.value !== '')
    .map((i) => i.name + '=' + i.value);
}

// Your config.toml holds the tables `hall` reads from it: the policy and notifications
// as the repository's schema describes them, and the signing key.
const USER_SCHEMA_TABLES = ['policy', 'notify'];
const SIGNING = {
  type: 'object',
  properties: {
    key: { type: 'string', description: 'An SSH private key to sign hallmarks with instead of Hallmark\'s own.' },
    principal: { type: 'string', description: 'Who signs: must match the base branch\'s allowed_signers.' },
  },
};

// A form that shows `hall config set …`'s diff before saving, then saves.
function settingsSection(kind, rows, extra) {
  const form = el('form', { 'data-settings': kind }, el('table', {}, rows));
  const out = el('div', {});
  form.append(el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Show the change')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const words = changes(form);
    if (!words.length) { out.replaceChildren(el('p', { class: 'muted' }, 'Nothing changed.')); return; }
    const argv = ['config', 'set', ...words, ...extra];
    try {
      const r = await view([...argv, '--dry-run']);
      const save = el('button', { type: 'button', onclick: async () => { if (await act(argv)) out.replaceChildren(); } }, 'Save');
      out.replaceChildren(el('pre', { 'data-view': 'diff' }, r.json.diff || 'no change'), r.json.diff ? save : '');
      status(shown(argv) + ' --dry-run');
    } catch (err) {
      out.replaceChildren(el('pre', { class: 'error' }, err.message));
    }
  });
  return [form, out];
}

async function settings() {
  const [schema, repo, user] = await Promise.all([view(['schema', 'config']), view(['config', 'show']), view(['config', 'show', '--user'])]);
  const root = el('div', {}, el('h2', {}, 'Settings: this repository'));
  root.append(el('p', { class: 'muted' }, repo.json.path + ' (the main checkout\'s; commit it on the base branch for the loop to read it)'));
  root.append(...settingsSection('repo', settingsForm(schema.json, repo.json.values), []));
  root.append(el('h2', {}, 'Settings: yours'), el('p', { class: 'muted' }, user.json.path + ' (your own: it may tighten the policy, and holds where notifications go)'));
  const userSchema = { ...schema.json, properties: { ...schema.json.properties, signing: SIGNING } };
  const rows = settingsForm(userSchema, user.json.values, [...USER_SCHEMA_TABLES, 'signing']);
  root.append(...settingsSection('user', rows, ['--user']));
  return root;
}

const ROUTES = {
  board,
  inbox,
  history: () => textView(['history']),
  usage,
  queue: () => textView(['queue']),
  repos: () => textView(['daemon', 'status']),
  settings,
  item: () => { const p = location.hash.split('/'); return item(p[2], p[3]); },
};

async function render() {
  if (S.follow) { clearInterval(S.follow); S.follow = null; }
  const route = (location.hash.split('/')[1]) || 'board';
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('here', a.dataset.route === route);
  const fn = ROUTES[route] || board;
  try {
    const node = await fn();
    main().replaceChildren(node);
    // The first board drawn: what the page-load benchmark times.
    if (fn === board && !S.drawn) {
      S.drawn = true;
      performance.mark('board-drawn');
    }
  } catch (err) {
    main().replaceChildren(el('pre', { class: 'error' }, err.message));
  }
}

// Redraws after the journal moved, at most every 150 ms.
function refresh() {
  if (S.timer) return;
  S.timer = setTimeout(() => { S.timer = null; render(); }, 150);
}

// Whether the page shows the journal: the settings don't, and redrawing them on a
// journal event would throw away what a person is typing there.
function showsJournal() {
  return !location.hash.startsWith('#/settings');
}

function follow() {
  const live = document.getElementById('live');
  const source = new EventSource('/api/events');
  source.addEventListener('ready', (e) => { S.position = e.lastEventId; live.textContent = 'live'; live.className = 'on'; });
  source.onmessage = (e) => {
    S.events += 1;
    S.position = e.lastEventId;
    document.body.dataset.events = String(S.events);
    document.body.dataset.position = S.position;
    if (showsJournal()) refresh();
  };
  source.addEventListener('reset', () => { if (showsJournal()) refresh(); });
  source.onerror = () => { live.textContent = 'reconnecting'; live.className = 'off'; };
}

async function start() {
  // The session and the first view load side by side: the board's data is already on
  // its way (the page preloads it), and only an action needs the CSRF token.
  const session = getJSON('/api/session');
  window.addEventListener('hashchange', render);
  const first = render();
  try {
    const s = await session;
    S.csrf = s.csrf;
    S.repo = s.repo;
    document.getElementById('repo').textContent = s.repo;
    document.title = 'Hallmark: ' + s.repo;
    if (s.newer_binary) {
      const banner = document.getElementById('banner');
      banner.hidden = false;
      banner.replaceChildren('A newer hall is on disk. ', el('button', { onclick: restart }, 'Restart the server'));
    }
  } catch (err) {
    await first;
    main().replaceChildren(el('pre', { class: 'error' }, err.message));
    return;
  }
  follow();
}

async function restart() {
  status('restarting…');
  await fetch('/api/restart', { method: 'POST', credentials: 'same-origin', headers: { 'X-Hall-CSRF': S.csrf || '' } });
  for (let i = 0; i < 100; i += 1) {
    await new Promise((r) => setTimeout(r, 200));
    try { await getJSON('/api/session'); location.reload(); return; } catch (_) { /* not yet */ }
  }
  status('the server did not come back; run `hall web` again', true);
}

start();
