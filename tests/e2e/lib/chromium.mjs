// Headless chromium (Debian's `chromium` package, scripts/deps.sh test) for
// the tests of pages mcpreel writes: the DOM after the page's script ran
// (--dump-dom), a screenshot, and a page to drive — clicks, keys, typing —
// through the DevTools protocol over a pipe (--remote-debugging-pipe: JSON
// messages ended by a NUL byte, ours on fd 3, chromium's on fd 4), so no
// npm package is needed.  Every run has a user-data-dir of its own and a
// timeout.

import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const CHROMIUM = process.env.CHROMIUM || 'chromium';
const TIMEOUT_MS = 60000;
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions',
  '--disable-background-networking', '--disable-dev-shm-usage'];

function notInstalled() {
  return new Error(`${CHROMIUM} is not installed: apt-get install chromium (scripts/deps.sh test)`);
}

/** The file:// URL of file, with #hash if given. */
export function fileUrl(file, hash) {
  return pathToFileURL(file).href + (hash ? `#${hash}` : '');
}

/** Run chromium on a file with extra args; resolves with its stdout. */
export function runChromium(file, hash, args, timeoutMs = TIMEOUT_MS) {
  const profile = mkdtempSync(join(tmpdir(), 'mcpreel-chromium-'));
  const url = fileUrl(file, hash);
  return new Promise((resolve, reject) => {
    execFile(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, ...args, url],
      { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 512 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        rmSync(profile, { recursive: true, force: true });
        if (err && err.code === 'ENOENT') reject(notInstalled());
        else if (err) reject(new Error(`chromium failed on ${url}: ${err.message}\n${stderr}`));
        else resolve(stdout);
      });
  });
}

/** The page's DOM, serialised, after its script ran. */
export function dumpDom(file, hash) {
  return runChromium(file, hash, ['--dump-dom', '--virtual-time-budget=5000']);
}

/** A PNG screenshot of the page at width x height into png. */
export function screenshot(file, hash, png, width = 1280, height = 900) {
  return runChromium(file, hash, [`--window-size=${width},${height}`, '--hide-scrollbars', `--screenshot=${png}`]);
}

/**
 * Open the page in a browser we drive.  Resolves, once the page has
 * loaded, with:
 *   evaluate(expression)  run JavaScript in the page (awaiting a promise);
 *                         resolves with its value, as JSON
 *   click(selector)       a real mouse click (pressed and released) in the
 *                         middle of the element, scrolled into view first
 *   hover(selector)       the mouse moved onto the element
 *   press(key)            a key pressed and released ('Enter', ...) where
 *                         the focus is
 *   type(text)            text typed where the focus is
 *   close()               the browser killed, its profile removed
 */
export async function openPage(file, hash, { timeoutMs = TIMEOUT_MS } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'mcpreel-chromium-'));
  const child = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, '--remote-debugging-pipe',
    '--window-size=1280,900', fileUrl(file, hash)], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  const pending = new Map();
  let nextId = 1;
  let buf = Buffer.alloc(0);
  let stderr = '';
  let failed = null;
  const fail = (err) => {
    failed = failed || err;
    for (const p of pending.values()) p.reject(failed);
    pending.clear();
  };
  const killer = setTimeout(() => {
    fail(new Error(`chromium: no answer within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`));
    child.kill('SIGKILL');
  }, timeoutMs);
  child.on('error', (err) => fail(err.code === 'ENOENT' ? notInstalled() : err));
  child.on('exit', () => fail(new Error(`chromium exited; stderr: ${stderr.slice(-2000)}`)));
  child.stderr.on('data', (c) => { stderr += c; });
  child.stdio[3].on('error', () => {});
  child.stdio[4].on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    let nul;
    while ((nul = buf.indexOf(0)) >= 0) {
      const msg = JSON.parse(buf.subarray(0, nul).toString('utf8'));
      buf = buf.subarray(nul + 1);
      const p = msg.id !== undefined ? pending.get(msg.id) : undefined;
      if (!p) continue;
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}`));
      else p.resolve(msg.result);
    }
  });
  function send(method, params = {}, sessionId = undefined) {
    if (failed) return Promise.reject(failed);
    const id = nextId++;
    child.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + '\0');
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
  }
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // Closed through the protocol first, so that chromium's helper processes
  // are done with the profile; killed if that takes over 5 s.  Its helpers
  // may still be leaving files behind: the removal retries.
  async function close() {
    clearTimeout(killer);
    child.removeAllListeners('exit');
    const exited = new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', r)));
    if (!failed) send('Browser.close').catch(() => {});
    await Promise.race([exited, sleep(5000)]);
    child.kill('SIGKILL');
    await exited;
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }

  try {
    let page;
    while (!(page = (await send('Target.getTargets')).targetInfos.find((t) => t.type === 'page'))) await sleep(50);
    const { sessionId } = await send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
    const evaluate = async (expression) => {
      const r = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
      if (r.exceptionDetails) {
        throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
      }
      return r.result.value;
    };
    while (await evaluate(`document.readyState === 'complete' && location.protocol === 'file:'`) !== true) await sleep(50);
    const centre = async (selector) => {
      const at = await evaluate(`(() => {
        const e = document.querySelector(${JSON.stringify(selector)});
        if (!e) return null;
        e.scrollIntoView({ block: 'center' });
        const r = e.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      })()`);
      if (!at) throw new Error(`no element ${selector} in the page`);
      return at;
    };
    const mouse = (type, at, extra = {}) => send('Input.dispatchMouseEvent', { type, x: at.x, y: at.y, ...extra }, sessionId);
    const click = async (selector) => {
      const at = await centre(selector);
      await mouse('mouseMoved', at);
      await mouse('mousePressed', at, { button: 'left', clickCount: 1 });
      await mouse('mouseReleased', at, { button: 'left', clickCount: 1 });
    };
    const hover = async (selector) => mouse('mouseMoved', await centre(selector));
    const KEYS = { Enter: 13, ' ': 32, Escape: 27, Tab: 9 };
    const press = async (key) => {
      const code = KEYS[key];
      const common = { key, windowsVirtualKeyCode: code, nativeVirtualKeyCode: code };
      await send('Input.dispatchKeyEvent', { type: 'keyDown', ...common, text: key === 'Enter' ? '\r' : undefined }, sessionId);
      await send('Input.dispatchKeyEvent', { type: 'keyUp', ...common }, sessionId);
    };
    const type = (text) => send('Input.insertText', { text }, sessionId);
    return { evaluate, click, hover, press, type, close };
  } catch (err) {
    await close();
    throw err;
  }
}
