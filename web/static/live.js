// Shared by the board and run pages: the live socket (with reconnects) and small DOM helpers.
// No framework and no build step: this file is served exactly as it is.
import { failuresAfter, reconnectDelay } from './backoff.js';

/**
 * Follows `/v1/live` (with `query`), handing each message to `onMessage`. A dropped socket is opened
 * again after a wait that grows with each failure in a row (see backoff.js: a connection dropped soon
 * after it opened is a failure too); the server's hello after each reconnect carries a full fresh view.
 * `onMessage` returns false when the page cannot follow a message (a delta that does not follow its
 * view): the socket is closed and opened again for a fresh hello.
 */
export function follow(query, { onMessage, onState }) {
  let failures = 0;
  let timer = null;
  let socket = null;

  const open = () => {
    timer = null;
    const url = new URL(`/v1/live${query}`, location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const current = new WebSocket(url);
    socket = current;
    let openedAt = null;
    onState(failures === 0 ? 'connecting' : 'reconnecting');
    current.addEventListener('open', () => {
      openedAt = Date.now();
      onState('live');
    });
    current.addEventListener('message', (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (onMessage(message) === false) current.close(4000, 'out of step: reconnecting for a fresh view');
    });
    current.addEventListener('close', () => {
      socket = null;
      failures = failuresAfter(failures, { openedForMs: openedAt === null ? null : Date.now() - openedAt });
      onState('reconnecting');
      timer = setTimeout(open, reconnectDelay(failures));
    });
  };
  const now = () => {
    if (socket !== null || timer === null) return;
    clearTimeout(timer);
    open();
  };
  // Back online, or back to a hidden tab: try at once rather than wait out the backoff.
  addEventListener('online', now);
  document.addEventListener('visibilitychange', () => document.visibilityState === 'visible' && now());
  open();
}

const STATES = {
  connecting: 'Connecting to the log…',
  live: 'Live: following the log',
  reconnecting: 'Connection lost: reconnecting…',
};

/** Shows the socket's state in words (not colour alone); the element is a polite status region. */
export function showConnection(state) {
  const element = document.getElementById('connection');
  if (element.dataset.state === state) return;
  element.dataset.state = state;
  element.textContent = STATES[state];
}

/** `el('td', {class: 'x'}, 'text', child)`: text is always set as text, never parsed as HTML. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function shortId(id) {
  return id.length > 12 ? id.slice(0, 8) : id;
}

/** A link to a run's timeline page; its text is the short id the daemon's narration uses too. */
export function runLink(runId) {
  return el('a', { href: `/runs/${encodeURIComponent(runId)}`, class: 'run-link', title: `run ${runId}` }, el('code', {}, shortId(runId)));
}

/** `HH:MM:SS` UTC, in a <time> carrying the full instant. */
export function utcTime(ms, withMillis = false) {
  const iso = new Date(ms).toISOString();
  return el('time', { datetime: iso, title: iso.replace('T', ' ') }, iso.slice(11, withMillis ? 23 : 19));
}

/** The server's clock minus ours, so countdowns count to the board's deadlines, not this machine's. */
let skew = 0;
export function syncClock(serverNow) {
  skew = serverNow - Date.now();
}
export function serverNow() {
  return Date.now() + skew;
}

export function duration(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
}

/** How long something took, as a record says it: `340 ms`, `4.2 s`, then as `duration`. */
export function took(ms) {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return duration(ms);
}

/** `text` with each `command` in backticks set as code, the rest as text. */
export function withCode(text) {
  return text.split('`').map((part, i) => (i % 2 === 1 ? el('code', {}, part) : part));
}

/**
 * Elements with `data-until` count down ("in 27 s"), those with `data-since` count up ("for 4 s"),
 * once a second. They are role="timer" (not announced as they tick); the status line says what matters.
 */
export function startTicking() {
  const tick = () => {
    const now = serverNow();
    for (const node of document.querySelectorAll('[data-until]')) {
      const left = Number(node.dataset.until) - now;
      node.textContent = left > 0 ? `in ${duration(left)}` : 'due now';
    }
    for (const node of document.querySelectorAll('[data-since]')) node.textContent = `for ${duration(now - Number(node.dataset.since))}`;
  };
  tick();
  setInterval(tick, 1000);
  return tick;
}

/**
 * Replaces what `host` shows, keeping the keyboard where it was: a live update must not throw the
 * focus of someone tabbing through the links back to the top of the page.
 */
export function replaceKeepingFocus(host, ...children) {
  const active = document.activeElement;
  const href = host.contains(active) && active instanceof HTMLAnchorElement ? active.getAttribute('href') : null;
  const row = href ? active.closest('tr')?.dataset.key : undefined;
  // A child left out (null, as `el` allows) is skipped: replaceChildren would print it as the text "null".
  host.replaceChildren(...children.filter((child) => child !== null && child !== undefined && child !== false));
  if (href === null) return;
  const links = [...host.querySelectorAll(`a[href="${CSS.escape(href)}"]`)];
  const same = links.find((a) => a.closest('tr')?.dataset.key === row) ?? links[0];
  same?.focus();
}

/** A table with a caption and column headers; `rows` are <tr> elements. */
export function table({ caption, columns, rows, className }) {
  return el(
    'table',
    { class: className },
    el('caption', {}, caption),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        columns.map((c) => el('th', { scope: 'col' }, c)),
      ),
    ),
    el('tbody', {}, rows),
  );
}

export function badge(state) {
  return el('span', { class: `badge state-${state}` }, state);
}

/** A link to a lane's page (its conversation); its text is the lane's name. */
export function laneLink(lane) {
  return el('a', { href: `/lanes/${encodeURIComponent(lane)}`, class: 'lane-link', title: `lane ${lane}: its conversation` }, el('code', {}, lane));
}

/**
 * What a turn cost, as its agent reported it (`usage.cost_usd` of the API, `costUsd` of a record):
 * "$0.0123", or "cost unknown" when no agent said (a Codex turn reports tokens, not dollars). Never
 * "$0" for a cost nobody knows.
 */
export function costText(usd) {
  if (usd === undefined || usd === null) return 'cost unknown';
  return `$${Math.round(usd * 10_000) / 10_000}`;
}
