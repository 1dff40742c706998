// The history page (`/history`): finished runs, newest first, a page at a time, filtered by the
// query of its own address (lane, state, computer, q, before), which its form and links set.
import { badge, costText, el, follow, laneLink, runLink, showConnection, table, took, utcTime } from './live.js';

const FILTERS = ['lane', 'state', 'computer', 'q'];
const params = new URLSearchParams(location.search);
const form = document.getElementById('filters');

for (const name of FILTERS) form.elements[name].value = params.get(name) ?? '';

// The page's address carries the filters: a filtered history can be linked, and Back works.
form.addEventListener('submit', (event) => {
  event.preventDefault();
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = form.elements[name].value.trim();
    if (value) query.set(name, value);
  }
  location.assign(`/history${query.size ? `?${query}` : ''}`);
});

function say(text) {
  document.getElementById('summary').textContent = text;
}

function filtersSaid() {
  const parts = FILTERS.filter((n) => params.get(n)).map((n) => (n === 'q' ? `text “${params.get(n)}”` : `${n} ${params.get(n)}`));
  return parts.length ? ` matching ${parts.join(', ')}` : '';
}

function row(run) {
  const said = run.error ? el('span', { class: 'error-text' }, run.error) : run.reply;
  return el(
    'tr',
    { 'data-run': run.runId, 'data-state': run.state, 'data-seq': run.seq },
    el('th', { scope: 'row' }, runLink(run.runId)),
    el('td', {}, badge(run.state)),
    el('td', {}, run.lane ? laneLink(run.lane) : el('span', { class: 'muted' }, '?')),
    el('td', {}, run.computer ?? el('span', { class: 'muted' }, 'none')),
    el('td', { class: 'when' }, utcTime(run.finishedAt), el('span', { class: 'muted' }, ` ${new Date(run.finishedAt).toISOString().slice(0, 10)}`)),
    // How long its agent ran (its process's start to its exit), as the run page's "Ran for" says it.
    el(
      'td',
      { class: 'when ran-for' },
      run.durationMs === null || run.durationMs === undefined ? el('span', { class: 'muted' }, '—') : took(run.durationMs),
    ),
    el(
      'td',
      { class: 'cost', 'data-cost': run.costUsd ?? '' },
      run.costUsd === null || run.costUsd === undefined ? el('span', { class: 'muted' }, 'unknown') : costText(run.costUsd),
    ),
    el('td', { class: 'text' }, run.prompt),
    el('td', { class: 'text' }, said || el('span', { class: 'muted' }, '—')),
  );
}

/** The log's entries that end a run: the newest page is read again when one comes. */
const FINISHING = new Set(['board.run.finished', 'board.run.resolved', 'board.run.cancelled']);
let loading = null;
let again = false;

/** Reads the page again, once at a time: runs that finish while it reads are read once more after. */
function reload() {
  if (loading) {
    again = true;
    return;
  }
  loading = load().finally(() => {
    loading = null;
    if (again) {
      again = false;
      reload();
    }
  });
}

async function load() {
  const query = new URLSearchParams(params);
  let page;
  try {
    const response = await fetch(`/history/runs?${query}`);
    if (response.status === 401) {
      // Off loopback the view asks for the token; an expired one answers with the sign-in page, not JSON.
      say('The board asks for its token again: reload the page to sign in.');
      return;
    }
    page = await response.json();
    if (!response.ok) {
      say(`The history could not be shown: ${page.detail?.message ?? response.status}.`);
      return;
    }
  } catch (error) {
    say(`The board did not answer (${error.message}): reload the page once it runs again.`);
    return;
  }
  const host = document.getElementById('history');
  const older = params.get('before') !== null;
  if (page.runs.length === 0) {
    host.replaceChildren(
      el(
        'p',
        { class: 'empty' },
        `No finished run${filtersSaid()}${older ? ' older than the last page' : ''}${page.partial ? ' in the part of the log searched so far' : ''}.`,
      ),
    );
  } else {
    host.replaceChildren(
      table({
        caption: `${page.runs.length} finished run${page.runs.length === 1 ? '' : 's'}${filtersSaid()}, newest first${older ? ' (an older page)' : ''}`,
        columns: ['Run', 'State', 'Lane', 'Computer', 'Finished (UTC)', 'Ran for', 'Cost', 'Prompt', 'Reply or error'],
        rows: page.runs.map(row),
        className: 'history',
      }),
    );
  }
  say(
    `${page.runs.length} run${page.runs.length === 1 ? '' : 's'} shown${filtersSaid()}${page.next === null ? '; nothing older.' : '; older ones on the next page.'}`,
  );
  const pager = document.getElementById('pager');
  const links = [];
  if (older) {
    const newest = new URLSearchParams(params);
    newest.delete('before');
    links.push(el('a', { href: `/history${newest.size ? `?${newest}` : ''}`, rel: 'first' }, 'Newest runs'));
  }
  if (page.next !== null) {
    const next = new URLSearchParams(params);
    next.set('before', String(page.next));
    links.push(el('a', { href: `/history?${next}`, rel: 'next', id: 'older' }, page.partial ? 'Search older runs' : 'Older runs'));
  }
  pager.replaceChildren(...links.flatMap((link, i) => (i ? [' · ', link] : [link])));
}

reload();
// The newest page follows the log (the board page's live socket): each run that finishes comes in at
// its top. An older page (`before`) is a fixed slice of the past and is not redrawn.
follow('', {
  onState: showConnection,
  onMessage(message) {
    if (params.get('before') !== null) return;
    if (message.type === 'hello') reload();
    else if (message.type === 'events' && message.events.some((e) => FINISHING.has(e.step))) reload();
  },
});
