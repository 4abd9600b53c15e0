// `mcpreel report`: the HTML page of a recorded session, loaded in a real
// headless browser (Debian's chromium, lib/chromium.mjs).  What the page's
// script built is read back from chromium's --dump-dom and compared with
// the database, read with the sqlite3 shell; clicks, keys and typing go
// to the page through the DevTools protocol.
//
// MCPREEL_REPORT_PNG=FILE also copies the screenshot of the SDK session's
// report to FILE (that is how docs/report.png is made).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { dumpDom, openPage, screenshot } from './lib/chromium.mjs';
import { driveCheckpeer } from './lib/checkpeer.mjs';
import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

/** Text content of serialised HTML: tags dropped, entities decoded. */
function textOf(html) {
  return html.replace(/<[^>]*>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>')
    .replace(/&nbsp;/g, '\u00a0').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
}

/**
 * The timeline rows of a dumped page: {classes, seq, hidden, html, text},
 * html running to the next row (so it includes an open row's detail).
 */
function rowsOf(dom) {
  const main = dom.slice(dom.indexOf('<main id="timeline">'), dom.indexOf('</main>'));
  return main.split('<div class="row ').slice(1).map((chunk) => {
    const tag = chunk.slice(0, chunk.indexOf('>'));
    const classes = tag.slice(0, tag.indexOf('"')).split(' ');
    const seq = /data-seq="(\d+)"/.exec(tag);
    return {
      classes, seq: seq ? Number(seq[1]) : null, hidden: /\shidden(="")?/.test(tag),
      html: chunk, text: textOf(chunk.slice(tag.length + 1)),
    };
  });
}

/** The open detail's <pre> text of a row, and its view (pretty or raw). */
function detailOf(row) {
  const m = /<pre class="body[^"]*" data-view="(\w+)">([\s\S]*?)<\/pre>/.exec(row.html);
  return m ? { view: m[1], text: textOf(m[2]) } : null;
}

/** The header's facts as {name: value}. */
function factsOf(dom) {
  const dl = dom.slice(dom.indexOf('<dl id="facts">'), dom.indexOf('</dl>'));
  const facts = {};
  for (const m of dl.matchAll(/<dt>([\s\S]*?)<\/dt><dd>([\s\S]*?)<\/dd>/g)) facts[textOf(m[1])] = textOf(m[2]);
  return facts;
}

/**
 * Whether a message (raw as text) is an error, decided here independently
 * of mcpreel: a JSON-RPC error, or a result with isError true.
 */
function isErr(m) {
  try {
    const v = JSON.parse(m.raw);
    return 'error' in v || v.result?.isError === true;
  } catch {
    return false;
  }
}

function sessionId(db, name) {
  return sql(db, `SELECT id FROM sessions WHERE name = '${name}'`)[0].id;
}

/** What the page may not hold: anything fetched from elsewhere. */
function assertSelfContained(file, dom) {
  const html = readFileSync(file, 'utf8');
  // The page itself (the data block left out: recorded text is data there,
  // and '<' is escaped in it, so it cannot become markup).
  const start = html.indexOf('<script type="application/json" id="mcpreel-data">');
  const end = html.indexOf('</script>', start);
  assert.ok(start > 0 && end > start, 'the data block is there');
  const page = html.slice(0, start) + html.slice(end);
  assert.doesNotMatch(page, /https?:\/\//i, 'no http(s) addresses in the page');
  assert.doesNotMatch(page, /\s(src|href)\s*=/i, 'no src= or href= in the page');
  assert.doesNotMatch(page, /@import|url\(/i, 'no CSS imports or url()');
  assert.match(page, /Content-Security-Policy" content="default-src 'none'/, 'a policy that loads nothing');
  assert.equal(html.indexOf('</script', start), end, 'nothing in the data block closes the script early');
  assert.doesNotMatch(html.slice(start, end), /<!--/, 'no comment opener in the data block');
  assert.doesNotMatch(html.slice(start, end), /[\u0000-\u0008\u2028\u2029]/, 'control characters and line separators escaped');
  // After the script ran: no element with a source or a link.
  assert.doesNotMatch(dom, /<[a-z][^>]*\s(src|href)\s*=/i, 'no element with src= or href= in the rendered page');
  assert.doesNotMatch(dom, /<(img|iframe|link|object|embed)\b/i, 'no images, frames or links in the rendered page');
  assert.equal(dom.match(/<script\b/gi).length, 2, 'only the two scripts of the page');
}

/** Width, height and size of a PNG file; asserts the signature. */
function pngInfo(file) {
  const b = readFileSync(file);
  assert.ok(b.length > 1000, `${file}: a PNG of ${b.length} bytes is too small`);
  assert.deepEqual([...b.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG signature');
  assert.equal(b.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20), size: b.length };
}

test('report of an SDK session with server-everything: every message, paired, expandable; offline', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const { command, args } = serverEverythingCommand();
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });
    const sid = sessionId(db, 'sdk');
    const msgs = sql(db, `SELECT m.seq, m.direction, m.kind, m.method, m.rpc_id, m.size, q.seq AS req_seq,
        m.mono_ns - q.mono_ns AS latency, CAST(m.raw AS TEXT) AS raw
      FROM messages m LEFT JOIN messages q ON q.id = m.reply_to WHERE m.session_id = ${sid} ORDER BY m.seq`);
    const events = sql(db, `SELECT kind FROM events WHERE session_id = ${sid}`);
    assert.ok(msgs.length > 50, `a real session (${msgs.length} messages)`);

    const file = join(t.dir, 'report.html');
    const r = await runMcpreel(['report', '--db', db, '-o', file, 'sdk'], { timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(r.stdout.length, 0, 'nothing on stdout with -o FILE');
    assert.match(r.stderr.toString(), new RegExp(`wrote ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: session ${sid}, ${msgs.length} messages`));
    assert.equal(statSync(file).mode & 0o777, 0o600, 'the page is private, as the database is');

    // Open the first tools/call answer and the 2 MiB echo request, which
    // the default --max-bytes (1 MiB) cuts.
    const answer = msgs.find((m) => m.kind === 'response' && m.method === 'tools/call' && m.size < 4096);
    const big = msgs.find((m) => m.direction === 'c2s' && m.method === 'tools/call' && m.size > 2 * 1024 * 1024);
    assert.ok(answer && big);
    const dom = await dumpDom(file, `open=${answer.seq},${big.seq}`);
    assertSelfContained(file, dom);
    assert.match(dom, new RegExp(`<title>mcpreel: session ${sid} \u201csdk\u201d</title>`), 'the script ran');

    // Every message is a row of the timeline, in order, with its direction
    // and kind; every event too.
    const rows = rowsOf(dom);
    const msgRows = rows.filter((x) => x.classes.includes('msg'));
    assert.equal(msgRows.length, msgs.length, 'one timeline row per recorded message');
    assert.deepEqual(msgRows.map((x) => x.seq), msgs.map((m) => m.seq));
    for (const [i, m] of msgs.entries()) {
      assert.ok(msgRows[i].classes.includes(m.direction) && msgRows[i].classes.includes(m.kind), `seq ${m.seq}: ${m.direction} ${m.kind}`);
      if (m.method) assert.ok(msgRows[i].text.includes(m.method), `seq ${m.seq}: shows ${m.method}`);
    }
    const evRows = rows.filter((x) => x.classes.includes('ev'));
    assert.equal(evRows.length, events.length, 'one row per event');
    assert.equal(evRows.filter((x) => x.classes.includes('stderr')).length, events.filter((e) => e.kind === 'stderr').length);
    assert.ok(evRows.some((x) => x.classes.includes('exit') && /server exited with status 0/.test(x.text)), 'the exit is shown');

    // Requests and their answers point at each other; latency bars are
    // proportional to the latency (the longest is 110 px).
    const byRow = new Map(msgRows.map((x) => [x.seq, x]));
    const answered = msgs.filter((m) => m.req_seq !== null);
    assert.ok(answered.length > 20);
    const maxLat = Math.max(...answered.map((m) => m.latency));
    for (const m of answered) {
      assert.ok(byRow.get(m.seq).text.includes(`\u21a9 #${m.req_seq}`), `seq ${m.seq} links to its request ${m.req_seq}`);
      assert.ok(byRow.get(m.req_seq).text.includes(`\u21aa #${m.seq}`), `request ${m.req_seq} links to its answer ${m.seq}`);
      const w = /class="bar" style="width: (\d+)px/.exec(byRow.get(m.seq).html);
      assert.ok(w, `seq ${m.seq}: a latency bar`);
      assert.equal(Number(w[1]), Math.max(2, Math.round(m.latency / maxLat * 110)), `seq ${m.seq}: bar width for ${m.latency} ns`);
    }

    // The opened answer: pretty-printed, the same JSON as recorded.
    const d = detailOf(byRow.get(answer.seq));
    assert.ok(d, 'the opened message shows its JSON');
    assert.equal(d.view, 'pretty');
    assert.match(d.text, /^\{\n {2}"[a-z]+": /, 'indented');
    assert.match(d.text, /\n {4}"content": \[\n {6}\{\n/, 'nested, indented deeper');
    assert.deepEqual(JSON.parse(d.text), JSON.parse(answer.raw));
    const closed = msgRows.find((x) => x.seq !== answer.seq && x.seq !== big.seq);
    assert.equal(detailOf(closed), null, 'other messages stay closed');
    // The big one: cut at 1 MiB, and says so.
    const bd = detailOf(byRow.get(big.seq));
    assert.ok(bd.text.length > 1000000 && bd.text.length < 1100000, `cut to about 1 MiB (${bd.text.length} characters)`);
    assert.ok(big.raw.replace(/\s/g, '').startsWith(bd.text.replace(/\s/g, '').slice(0, 100000)));
    assert.match(byRow.get(big.seq).text, /cut: only the first 1\.0 MiB of 2\.0 MiB/);

    // Header facts.
    const facts = factsOf(dom);
    const s = sql(db, `SELECT * FROM sessions WHERE id = ${sid}`)[0];
    assert.equal(facts.name, 'sdk');
    assert.equal(facts.transport, 'stdio');
    assert.match(facts.messages, new RegExp(`^${msgs.length} \\(\\d+\\.\\d MiB\\)$`));
    assert.equal(facts['lost messages'], '0');
    assert.equal(facts['server exit'], 'status 0');
    assert.equal(facts.ended, s.end_reason);
    assert.equal(facts.target, JSON.parse(s.target).join(' '));
    assert.match(facts.duration, /^\d+\.\d+ (ms|s)$/);
    assert.match(facts.started, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const errSeqs = msgs.filter(isErr).map((m) => m.seq);
    assert.equal(facts.errors, String(errSeqs.length));
    assert.deepEqual(msgRows.filter((x) => x.classes.includes('err')).map((x) => x.seq), errSeqs, 'exactly the errors are marked');

    // The screenshot: a PNG of the window's size.
    const png = join(t.dir, 'report.png');
    await screenshot(file, `open=${answer.seq}`, png, 1280, 900);
    const info = pngInfo(png);
    assert.deepEqual([info.width, info.height], [1280, 900]);
    if (process.env.MCPREEL_REPORT_PNG) copyFileSync(png, process.env.MCPREEL_REPORT_PNG);

    // -o - writes the same page to stdout; without -o, mcpreel-ID.html.
    const out = await runMcpreel(['report', '--db', db, '-o', '-', String(sid)], { timeoutMs: 60000 });
    assert.equal(out.code, 0);
    const strip = (h) => h.replace(/"generated":"[^"]*"/, '');
    assert.equal(strip(out.stdout.toString()), strip(readFileSync(file, 'utf8')));
    const cwd = join(t.dir, 'cwd');
    mkdirSync(cwd);
    const dflt = await new Promise((resolve, reject) => {
      execFile(MCPREEL, ['report', '--db', db, 'last'], { cwd, timeout: 60000 }, (err, so, se) => (err ? reject(new Error(se)) : resolve(so)));
    });
    assert.equal(dflt, '');
    assert.ok(existsSync(join(cwd, `mcpreel-${sid}.html`)), 'the default name is mcpreel-ID.html');
  } finally {
    t.cleanup();
  }
});

test('report of a session with errors, a non-JSON line and bytes that are not UTF-8: marked, and inert', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'err.db');
    const input = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fail', arguments: { html: '</script><img src=x onerror="document.title=1">' } } },
      { jsonrpc: '2.0', id: 3, method: 'nope' },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'fine' } },
    ].map((m) => JSON.stringify(m)).join('\n') + '\nthe host says something that is not JSON <!-- <script> \u2028\u0001\u0000 end\n';
    const rec = await runMcpreel(['record', '--db', db, '--name', 'err', '--', process.execPath, join(PEERS_DIR, 'errpeer.mjs')],
      { input: Buffer.from(input) });
    assert.equal(rec.code, 0, rec.stderr.toString());
    const sid = sessionId(db, 'err');
    const msgs = sql(db, `SELECT seq, direction, kind, method, CAST(raw AS TEXT) AS raw, hex(raw) AS hex
      FROM messages WHERE session_id = ${sid} ORDER BY seq`);

    const errSeqs = msgs.filter(isErr).map((m) => m.seq);
    assert.equal(errSeqs.length, 2, 'one error and one isError result were recorded');
    const notJson = msgs.filter((m) => m.kind === 'invalid');
    assert.equal(notJson.length, 3, 'two lines that are not JSON and one that is not UTF-8');

    const file = join(t.dir, 'err.html');
    const r = await runMcpreel(['report', '--db', db, '-o', file, 'err']);
    assert.equal(r.code, 0, r.stderr.toString());
    const binary = msgs.find((m) => m.hex.includes('FFFE'));
    const dom = await dumpDom(file, `open=${errSeqs.join(',')},${binary.seq}`);
    assertSelfContained(file, dom);
    assert.match(dom, new RegExp(`<title>mcpreel: session ${sid} \u201cerr\u201d</title>`), 'the title is ours, not the traffic\'s');

    const rows = rowsOf(dom).filter((x) => x.classes.includes('msg'));
    assert.deepEqual(rows.map((x) => x.seq), msgs.map((m) => m.seq), 'every message has its row');
    assert.deepEqual(rows.filter((x) => x.classes.includes('err')).map((x) => x.seq), errSeqs, 'exactly the errors are marked');
    assert.equal(factsOf(dom).errors, '2');
    const byRow = new Map(rows.map((x) => [x.seq, x]));
    assert.match(byRow.get(errSeqs[0]).text, /tool result with isError: true/, 'the isError result says so when opened');
    assert.ok(byRow.get(errSeqs[1]).classes.includes('error'), 'the JSON-RPC error is kind error');

    // The text that is not JSON is shown as text, markup and all.
    for (const m of notJson.filter((x) => x !== binary)) {
      assert.ok(byRow.get(m.seq).classes.includes('invalid'));
      assert.ok(byRow.get(m.seq).text.includes(m.raw.slice(0, 50)), `seq ${m.seq} shows its text`);
    }
    const bd = detailOf(byRow.get(binary.seq));
    assert.equal(bd.view, 'raw');
    assert.equal(bd.text, 'bin \\xff\\xfe', 'bytes that are not UTF-8 as \\xNN');
    const ed = detailOf(byRow.get(errSeqs[0]));
    assert.deepEqual(JSON.parse(ed.text), JSON.parse(msgs.find((m) => m.seq === errSeqs[0]).raw));

    // The filter: by text (the address can set it), and errors only.
    const nope = rowsOf(await dumpDom(file, 'q=NOPE')).filter((x) => x.classes.includes('msg'));
    const want = msgs.filter((m) => (m.method ?? '').includes('nope') || m.raw.toLowerCase().includes('nope')).map((m) => m.seq);
    assert.ok(want.length >= 2);
    assert.deepEqual(nope.filter((x) => !x.hidden).map((x) => x.seq), want, 'the text filter shows what matches');
    const onlyErr = rowsOf(await dumpDom(file, 'errors=1'));
    assert.deepEqual(onlyErr.filter((x) => !x.hidden).map((x) => x.seq), errSeqs, 'errors only');

    // Driven like a person would: clicks, keys, the mouse, typing.
    const page = await openPage(file);
    try {
      const error = msgs.find((m) => m.seq === errSeqs[1]);
      const request = msgs.find((m) => m.direction === 'c2s' && m.kind === 'request' && m.method === 'nope');
      const rowSel = (seq) => `.row.msg[data-seq="${seq}"]`;
      const state = (seq) => page.evaluate(`(() => {
        const r = document.querySelector('${rowSel(seq)}');
        const d = r.nextElementSibling && r.nextElementSibling.classList.contains('detail') ? r.nextElementSibling : null;
        const pre = d && d.querySelector('pre');
        return { expanded: r.getAttribute('aria-expanded'), open: !!d && !d.hidden, text: pre ? pre.textContent : null,
          view: pre ? pre.getAttribute('data-view') : null, focused: document.activeElement === r,
          pair: r.classList.contains('pair'), flash: r.classList.contains('flash') };
      })()`);
      assert.equal((await state(error.seq)).open, false, 'closed at first');
      await page.click(`${rowSel(error.seq)} .kind`);  // the kind cell: the row's centre may be its link
      let st = await state(error.seq);
      assert.equal(st.expanded, 'true');
      assert.ok(st.open, 'a click opens the message');
      assert.equal(st.view, 'pretty');
      assert.match(st.text, /^\{\n {2}"/);
      assert.deepEqual(JSON.parse(st.text), JSON.parse(error.raw), 'its pretty JSON is the message');
      await page.click(`${rowSel(error.seq)} + .detail .meta button:nth-of-type(2)`);
      st = await state(error.seq);
      assert.equal(st.view, 'raw');
      assert.equal(st.text, error.raw, 'raw: the bytes as recorded');
      await page.click(`${rowSel(error.seq)} .kind`);  // the kind cell: the row's centre may be its link
      assert.equal((await state(error.seq)).open, false, 'a second click closes it');
      // The link to the request it answers: scrolls there and focuses it.
      await page.click(`${rowSel(error.seq)} .link`);
      st = await state(request.seq);
      assert.ok(st.focused && st.flash, 'the link leads to the request');
      assert.equal(st.open, false);
      await page.press('Enter');
      assert.ok((await state(request.seq)).open, 'Enter on a row opens it');
      // Hovering a response marks its request.
      await page.hover(rowSel(error.seq));
      assert.ok((await state(request.seq)).pair, 'the pair is marked on hover');
      // Typing in the filter; a direction turned off.
      await page.click('#filter');
      await page.type('Method not');
      const visible = () => page.evaluate(`new Promise((resolve) => setTimeout(() => resolve(
        [...document.querySelectorAll('.row.msg')].filter((r) => !r.hidden).map((r) => Number(r.dataset.seq))), 400))`);
      assert.deepEqual(await visible(), [error.seq], 'the filter as typed');
      assert.equal(await page.evaluate(`document.getElementById('shown').textContent`), `1 of ${msgs.length} messages shown`);
      await page.evaluate(`(() => { const f = document.getElementById('filter'); f.value = ''; f.dispatchEvent(new Event('input')); })()`);
      await page.click('input[data-dir="c2s"]');
      assert.deepEqual(await visible(), msgs.filter((m) => m.direction === 's2c').map((m) => m.seq), 'host -> server turned off');
    } finally {
      await page.close();
    }
  } finally {
    t.cleanup();
  }
});

test('report of a session breaking a rule: its findings counted and listed at the top, linked, and marked on the message', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    await driveCheckpeer(db, 'ok');
    await driveCheckpeer(db, 'answer-twice');
    const chk = JSON.parse((await runMcpreel(['check', '--db', db, '--json', 'answer-twice'])).stdout.toString());
    assert.equal(chk.findings.length, 1);
    const f = chk.findings[0];
    assert.equal(f.rule, 'jsonrpc.answered-twice');

    const file = join(t.dir, 'bad.html');
    const r = await runMcpreel(['report', '--db', db, '-o', file, 'answer-twice']);
    assert.equal(r.code, 0, r.stderr.toString());
    const dom = await dumpDom(file, `open=${f.seq}`);
    assertSelfContained(file, dom);
    const box = dom.slice(dom.indexOf('<section id="findings"'), dom.indexOf('</section>'));
    assert.match(textOf(box), /findings: 1 error, 0 warnings, 0 notes/, 'the counts at the top');
    const items = [...box.matchAll(/<li class="finding (\w+)">([\s\S]*?)<\/li>/g)];
    assert.equal(items.length, 1, box);
    assert.equal(items[0][1], 'error');
    assert.match(items[0][2], new RegExp(`data-to="${f.seq}"`), 'it links to its message');
    assert.ok(textOf(items[0][2]).includes(`error ${f.rule}: ${f.message}`), textOf(items[0][2]));

    const rows = rowsOf(dom).filter((x) => x.classes.includes('msg'));
    const marked = rows.filter((x) => /class="fmark /.test(x.html.slice(0, x.html.indexOf('class="detail"') >= 0 ? x.html.indexOf('class="detail"') : undefined)));
    assert.deepEqual(marked.map((x) => x.seq), [f.seq], 'only that message is marked');
    const row = marked[0];
    assert.match(row.html, /<span class="fmark error" title="error jsonrpc\.answered-twice: [^"]+">E<\/span>/, 'the mark, its text on hover');
    const detail = row.html.slice(row.html.indexOf('class="detail"'));
    assert.ok(textOf(detail).includes(`error ${f.rule}: ${f.message}`), 'the finding in the open detail');

    // A clean session says so, and marks nothing.
    const clean = join(t.dir, 'ok.html');
    assert.equal((await runMcpreel(['report', '--db', db, '-o', clean, 'ok'])).code, 0);
    const okDom = await dumpDom(clean);
    assert.match(textOf(okDom.slice(okDom.indexOf('<section id="findings"'), okDom.indexOf('</section>'))), /findings: 0 errors, 0 warnings, 0 notes/);
    assert.doesNotMatch(okDom, /class="fmark /);
  } finally {
    t.cleanup();
  }
});

test('report of a session of thousands of messages: its page drawn, the message opened on it', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'big.db');
    const N = 2500;
    const lines = [];
    for (let i = 1; i <= N; i++) lines.push(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { i } } }));
    // `cat` sends each line back: 2 * N messages.
    const rec = await runMcpreel(['record', '--db', db, '--name', 'big', '--', 'cat'], { input: Buffer.from(lines.join('\n') + '\n'), timeoutMs: 60000 });
    assert.equal(rec.code, 0, rec.stderr.toString());
    const n = sql(db, `SELECT count(*) AS n FROM messages WHERE session_id = ${sessionId(db, 'big')}`)[0].n;
    assert.equal(n, 2 * N);
    const file = join(t.dir, 'big.html');
    const r = await runMcpreel(['report', '--db', db, '-o', file, 'big'], { timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr.toString());
    const dom = await dumpDom(file, `open=${N}`);
    const rows = rowsOf(dom).filter((x) => x.classes.includes('msg'));
    // Drawn a page (500 rows) at a time: the page of the message opened.
    assert.ok(rows.length >= 498 && rows.length <= 500, `${rows.length} rows drawn: one page`);
    assert.ok(rows.some((x) => x.seq === N && detailOf(x)), 'the message opened is drawn, open');
    assert.match(dom, new RegExp(`${n} of ${n} messages shown`));
  } finally {
    t.cleanup();
  }
});

/**
 * Run mcpreel with args; resolves with {code, stderr, peakKiB}: its peak
 * resident memory (VmHWM), read from /proc while it runs.
 */
function runWithPeak(args, env, timeoutMs = 120000) {
  return new Promise((resolve, reject) => {
    const child = spawn(MCPREEL, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    let peakKiB = 0;
    const err = [];
    child.stderr.on('data', (c) => err.push(c));
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peakKiB = Math.max(peakKiB, Number(m[1]));
      } catch { /* it has exited */ }
    }, 5);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      resolve({ code, stderr: Buffer.concat(err).toString(), peakKiB });
    });
  });
}

test('report of a large session streams: memory stays far below the session size', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'large.db');
    const blob = 'x'.repeat(4 * 1024 * 1024);
    const lines = [];
    for (let i = 1; i <= 12; i++) lines.push(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { blob } } }));
    const rec = await runMcpreel(['record', '--db', db, '--name', 'large', '--', 'cat'], { input: Buffer.from(lines.join('\n') + '\n'), timeoutMs: 120000 });
    assert.equal(rec.code, 0, rec.stderr.toString());
    const bytes = sql(db, `SELECT sum(size) AS n FROM messages`)[0].n;
    assert.ok(bytes > 96 * 1024 * 1024, `${bytes} bytes recorded`);
    const file = join(t.dir, 'large.html');
    // ASan keeps freed memory in quarantine; without it, what is resident
    // is what the report holds.
    const r = await runWithPeak(['report', '--db', db, '--max-bytes', '0', '-o', file, 'large'], { ASAN_OPTIONS: 'quarantine_size_mb=0:detect_leaks=1' });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(statSync(file).size > bytes, 'every byte is in the page');
    assert.ok(r.peakKiB > 0, 'the peak was read');
    assert.ok(r.peakKiB * 1024 < bytes / 2, `peak ${r.peakKiB} KiB for a session of ${bytes} bytes`);
  } finally {
    t.cleanup();
  }
});

test('report: errors a user can act on', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'e.db');
    const rec = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.equal(rec.code, 0);
    let r = await runMcpreel(['report', '--db', db, 'nosuch']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /no session with id or name 'nosuch'/);
    r = await runMcpreel(['report', '--db', db, '-o', join(t.dir, 'no', 'dir', 'x.html'), 'last']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /cannot create .*x\.html: No such file or directory/);
    r = await runMcpreel(['report', '--db', db, '--max-bytes', 'lots', 'last']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /--max-bytes takes a number of bytes/);
    r = await runMcpreel(['report', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout.toString(), /default:\s+mcpreel-ID\.html/);
    assert.match(r.stdout.toString(), /'-' for stdout/);
    // An empty session still makes a page.
    const file = join(t.dir, 'empty.html');
    r = await runMcpreel(['report', '--db', db, '-o', file, 'last']);
    assert.equal(r.code, 0, r.stderr.toString());
    const dom = await dumpDom(file);
    assert.match(dom, /No messages were recorded in this session\./);
    assert.match(dom, /0 of 0 messages shown/);
  } finally {
    t.cleanup();
  }
});

test('report of a big session pages its rows: one page in the document, paging and the filter reach later rows', { timeout: 300000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'big.db');
    const N = 10000;   // requests; cat sends each back: 2 N messages
    const lines = [];
    // Request 9000 says jsonrpc 1.0: a finding on a page far from the first.
    for (let i = 1; i <= N; i++) lines.push(JSON.stringify({ jsonrpc: i === 9000 ? '1.0' : '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { tag: `tag-${i}.` } } }));
    const rec = await runMcpreel(['record', '--db', db, '--name', 'big', '--', 'cat'], { input: Buffer.from(lines.join('\n') + '\n'), timeoutMs: 120000 });
    assert.equal(rec.code, 0, rec.stderr.toString());
    const seqs = sql(db, `SELECT seq FROM messages ORDER BY seq`).map((m) => m.seq);
    assert.equal(seqs.length, 2 * N);
    const file = join(t.dir, 'big.html');
    const r = await runMcpreel(['report', '--db', db, '-o', file, 'big'], { timeoutMs: 120000 });
    assert.equal(r.code, 0, r.stderr.toString());
    const PAGE = 500;
    const pages = Math.ceil(seqs.length / PAGE);
    const msgRows = (dom) => rowsOf(dom).filter((x) => x.classes.includes('msg'));
    const info = (dom) => textOf(/<span id="pgInfo">([\s\S]*?)<\/span>/.exec(dom)[1]);
    // A page's messages are a run of seqs starting near (events come
    // between them: the server's spawn, its exit) where the page starts.
    const run = (got, start) => {
      const i = seqs.indexOf(got[0]);
      assert.ok(i >= start - 2 && i <= start, `the page starts at message ${i}, near ${start}`);
      assert.deepEqual(got, seqs.slice(i, i + got.length), 'a run of messages in order');
      assert.ok(got.length >= PAGE - 2, `${got.length} messages on the page`);
    };

    // The first page: only its rows are in the document.
    let dom = await dumpDom(file);
    assert.equal(rowsOf(dom).length, PAGE, 'one page of rows, and nothing else');
    run(msgRows(dom).map((x) => x.seq), 0);
    const pagesShown = Number(/^page 1 of (\d+) \(rows 1\u2013500\)$/.exec(info(dom))?.[1]);
    assert.ok(pagesShown >= pages && pagesShown <= pages + 1, `${info(dom)}: ${pages} pages of messages and the events`);
    assert.match(dom, new RegExp(`${2 * N} of ${2 * N} messages shown`));

    // A later page by the address.
    dom = await dumpDom(file, 'page=31');
    assert.equal(rowsOf(dom).length, PAGE);
    run(msgRows(dom).map((x) => x.seq), 30 * PAGE);

    // The filter looks in every row, not the page shown: the last request's
    // two copies, far past the first page.
    dom = await dumpDom(file, `q=tag-${N}.`);
    const last = sql(db, `SELECT seq FROM messages WHERE CAST(raw AS TEXT) LIKE '%tag-${N}.%' ORDER BY seq`).map((m) => m.seq);
    assert.equal(last.length, 2);
    assert.deepEqual(msgRows(dom).map((x) => x.seq), last, 'the filter finds rows of the last page');
    // Its results are paged too: tag-1, tag-10..19, ... tag-1000..1999 and their copies.
    const ones = sql(db, `SELECT seq FROM messages WHERE CAST(raw AS TEXT) LIKE '%tag-1%' ORDER BY seq`).map((m) => m.seq);
    assert.ok(ones.length > 3 * PAGE, `${ones.length} rows match`);
    const lastPage = Math.ceil(ones.length / PAGE);
    dom = await dumpDom(file, `q=tag-1&page=${lastPage}`);
    assert.deepEqual(msgRows(dom).map((x) => x.seq), ones.slice((lastPage - 1) * PAGE), 'the filtered rows\' last page');
    assert.match(info(dom), new RegExp(`^page ${lastPage} of ${lastPage} `));
    assert.match(dom, new RegExp(`${ones.length} of ${2 * N} messages shown`));

    // Driven: next, and a jump to a message by its seq (opened by the address too).
    const page = await openPage(file);
    try {
      const shownSeqs = () => page.evaluate(`[...document.querySelectorAll('.row.msg')].map((r) => Number(r.dataset.seq))`);
      await page.click('#pgNext');
      run(await shownSeqs(), PAGE);
      const target = seqs[seqs.length - 3];
      await page.click('#pgGo');
      await page.type(`#${target}`);
      await page.press('Enter');
      const s = await shownSeqs();
      assert.ok(s.includes(target) && s.length <= PAGE, 'the jump shows the page that holds it');
      assert.equal(await page.evaluate(`document.activeElement && document.activeElement.dataset ? Number(document.activeElement.dataset.seq) : null`), target, 'and focuses its row');
      // Enter on the row the jump focused opens it, as on the first page.
      await page.press('Enter');
      assert.equal(await page.evaluate(`document.querySelector('.row.msg[data-seq="${target}"]').classList.contains('open')`), true, 'Enter opens the row jumped to');
      await page.click('#pgFirst');
      run(await shownSeqs(), 0);
      // A finding listed at the top whose message is on a later page:
      // its link shows that page, the row focused.
      const far = await page.evaluate(`(() => { const l = [...document.querySelectorAll('#findings .link')].map((b) => Number(b.dataset.to)); return l.length ? Math.max(...l) : null; })()`);
      assert.ok(far !== null && seqs.indexOf(far) >= PAGE, `a finding on a later page (#${far})`);
      await page.evaluate(`document.querySelector('#findings .link[data-to="${far}"]').click()`);
      const s2 = await shownSeqs();
      assert.ok(s2.includes(far) && !s2.includes(seqs[0]), 'the finding\'s link shows its page');
      assert.equal(await page.evaluate(`Number(document.activeElement.dataset.seq)`), far, 'and focuses its row');
    } finally {
      await page.close();
    }
    dom = await dumpDom(file, `open=${seqs[12345]}`);
    const opened = msgRows(dom).find((x) => x.seq === seqs[12345]);
    assert.ok(opened && detailOf(opened), 'a message opened by the address is shown open, on its page');
  } finally {
    t.cleanup();
  }
});

test('report of a session of over 100 000 messages: each message cut to 256 bytes by default, said in the page; --max-bytes still honoured', { timeout: 300000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'cut.db');
    const long = 'x'.repeat(600);
    const lines = [1, 2, 3].map((i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { tag: `tag-${i}`, long } } }));
    const rec = await runMcpreel(['record', '--db', db, '--name', 'cut', '--', 'cat'], { input: Buffer.from(lines.join('\n') + '\n') });
    assert.equal(rec.code, 0, rec.stderr.toString());
    // Past 100 000 messages: notifications added after them, by SQL (quicker
    // than recording them; the report counts the session's rows).
    sql(db, `WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 100000)
      INSERT INTO messages (session_id, seq, direction, ts_ns, mono_ns, kind, method, size, raw)
      SELECT s.id, 1000 + n, 's2c', s.started_ns, n, 'notification', 'notifications/message', 84,
        CAST('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}' AS BLOB)
      FROM k, sessions s WHERE s.name = 'cut'`);
    const seq = sql(db, `SELECT seq FROM messages ORDER BY seq LIMIT 1`)[0].seq;
    const file = join(t.dir, 'cut.html');
    let r = await runMcpreel(['report', '--db', db, '-o', file, 'cut'], { timeoutMs: 120000 });
    assert.equal(r.code, 0, r.stderr.toString());
    let dom = await dumpDom(file, `open=${seq}`);
    assert.match(factsOf(dom)['message text'] || '', /first 256 B of each message.*1000\d\d messages.*--max-bytes/);
    let d = detailOf(rowsOf(dom).find((x) => x.seq === seq));
    assert.ok(d && !d.text.includes(long), 'the message is cut');
    assert.match(dom, /cut: only the first 256 B of \d+(\.\d)? (B|KiB) are in this report/);
    // --max-bytes given, even the usual default, is what the page holds.
    for (const max of ['1048576', '0']) {
      r = await runMcpreel(['report', '--db', db, '--max-bytes', max, '-o', file, 'cut'], { timeoutMs: 120000 });
      assert.equal(r.code, 0, r.stderr.toString());
      dom = await dumpDom(file, `open=${seq}`);
      assert.equal(factsOf(dom)['message text'], undefined, `--max-bytes ${max}: no cut said`);
      d = detailOf(rowsOf(dom).find((x) => x.seq === seq));
      assert.ok(d && d.text.includes(long), `--max-bytes ${max}: the whole message`);
      assert.doesNotMatch(dom, /cut: only the first \d/);
    }
  } finally {
    t.cleanup();
  }
});
