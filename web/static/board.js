// The board page (`/`): lanes, open claims, sessions, computers and the newest decisions, kept live.
import { newLaneBox } from './actions.js';
import { applyDelta } from './boardModel.js';
import {
  badge,
  costText,
  el,
  follow,
  laneLink,
  replaceKeepingFocus,
  runLink,
  serverNow,
  shortId,
  showConnection,
  startTicking,
  syncClock,
  table,
  utcTime,
  withCode,
} from './live.js';

const MAX_ACTIVITY = 40;
let seen = new Set();
/** The view as the server numbered it: its hello's, then each delta applied in turn. */
let view = null;
let version = 0;
let lastSeq = 0;
let lastSummary = '';
let tick = () => {
  // replaced once the first summary is drawn
};

/** What each section was last drawn from: a delta leaves the parts it does not change as they were (boardModel.js). */
const drawnFrom = {};

/**
 * Draws the sections whose part of the view changed. A delta usually touches one or two (a run's
 * state, a heartbeat's usage); redrawing the rest replaced every table of the page four times a second
 * while the board was busy, and the browser laid it all out again each time.
 */
function render(snapshot) {
  syncClock(snapshot.at);
  const changed = (section, ...parts) => {
    const before = drawnFrom[section];
    drawnFrom[section] = parts;
    return before === undefined || parts.some((part, i) => part !== before[i]);
  };
  if (changed('lanes', snapshot.lanes, snapshot.more, snapshot.counts)) {
    const shown = new Set();
    renderLanes(snapshot, shown);
    seen = shown;
  }
  if (changed('claims', snapshot.claims, snapshot.more)) renderClaims(snapshot);
  if (changed('sessions', snapshot.sessions, snapshot.more)) renderSessions(snapshot);
  if (changed('computers', snapshot.computers, snapshot.more)) renderComputers(snapshot);
  if (changed('usage', snapshot.usage)) renderUsage(snapshot);
  latest = snapshot;
  renderStuck();
  tick();
  announce(snapshot);
}

/** A row is "fresh" (briefly highlighted) when its run is in a state it was not in the last snapshot. */
function freshness(key, shown) {
  shown.add(key);
  return seen.size > 0 && !seen.has(key) ? 'fresh' : null;
}

/** What the page leaves out of a long list, in one sentence; null when it lists everything. */
function lanesLeftOut(snapshot) {
  const { runs, lanes } = snapshot.more;
  if (!runs) return null;
  const { queued, parked, claiming, running } = snapshot.counts;
  const all = queued + parked + claiming + running;
  return el(
    'p',
    { class: 'hint more', id: 'lanes-more' },
    `Listed: the runs being worked on and the next ones waiting, ${all - runs} of ${all}; and ${runs} more not listed`,
    lanes ? ` (in ${lanes} more lane${lanes === 1 ? '' : 's'})` : '',
    '. The counts above include them; ',
    el('code', {}, 'runledger status'),
    ' lists them all.',
  );
}

function renderLanes(snapshot, shown) {
  const host = document.getElementById('lanes');
  if (snapshot.lanes.length === 0) {
    host.replaceChildren(el('p', { class: 'empty' }, 'No lane has a run queued, parked, claiming or running.'));
    return;
  }
  replaceKeepingFocus(
    host,
    lanesLeftOut(snapshot),
    ...snapshot.lanes.map((lane) => {
      const counts = {};
      for (const run of lane.runs) counts[run.state] = (counts[run.state] ?? 0) + 1;
      const note =
        `${lane.runs.length + lane.more} run${lane.runs.length + lane.more === 1 ? '' : 's'}: ` +
        Object.entries(counts)
          .map(([state, n]) => `${n} ${state}`)
          .join(', ') +
        (lane.more ? `, and ${lane.more} more not listed here` : '');
      const rows = lane.runs.map((run) =>
        el(
          'tr',
          {
            class: freshness(`${lane.lane}|${run.runId}|${run.state}`, shown),
            'data-run': run.runId,
            'data-state': run.state,
            'data-key': run.runId,
          },
          el('th', { scope: 'row' }, runLink(run.runId)),
          el(
            'td',
            {},
            badge(run.state),
            run.board && run.board !== run.state ? el('span', { class: 'muted board-state' }, ` board: ${run.board}`) : null,
          ),
          el('td', { class: 'holders' }, holders(run)),
          el('td', { class: 'why' }, run.why),
          el(
            'td',
            { class: 'when' },
            run.until === null
              ? el('span', { class: 'muted' }, '—')
              : [el('span', { role: 'timer', 'data-until': run.until }), ' ', el('span', { class: 'muted' }, '(at ', utcTime(run.until), ')')],
          ),
        ),
      );
      return el(
        'section',
        { class: 'lane', 'aria-labelledby': `lane-${lane.lane}`, 'data-lane': lane.lane },
        table({
          className: 'lane-runs',
          caption: [el('h3', { id: `lane-${lane.lane}` }, 'Lane ', laneLink(lane.lane)), el('span', { class: 'caption-note' }, note)],
          columns: ['Run', 'State', 'Held by', 'Why', 'Claimed again'],
          rows,
        }),
      );
    }),
  );
}

/** The computers whose queues hold a copy of the run, each with its copy's state when they differ. */
function holders(run) {
  const named = run.copies.filter((c) => c.computer !== null);
  if (named.length === 0) return el('span', { class: 'muted' }, 'board only');
  const same = named.every((c) => c.state === run.state);
  return el(
    'ul',
    { class: 'copies' },
    named.map((c) =>
      el(
        'li',
        { 'data-computer': c.computer, 'data-copy-state': c.state },
        c.computer,
        same ? null : el('span', { class: 'muted' }, ` (${c.state})`),
      ),
    ),
  );
}

let latest = null;

/** `45 s`, `7 min`: how long, as the banner says it. */
function spoken(ms) {
  const s = Math.floor(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min`;
}

/**
 * One sentence when the board is stuck, saying what is wrong and what to do; nothing otherwise. No
 * computer to take work is the board's word; a run waiting too long is counted here, every second,
 * since nothing is written to the log while a run just waits.
 */
function renderStuck() {
  const banner = document.getElementById('stuck');
  let kind = latest?.stuck?.kind ?? '';
  let text = latest?.stuck?.text ?? '';
  const wait = latest?.longestWait;
  if (!text && wait && serverNow() - wait.since >= wait.warnAfterMs) {
    kind = 'waited_long';
    text = `Run ${shortId(wait.runId)} has waited ${spoken(serverNow() - wait.since)} for a computer (the warning is at ${spoken(wait.warnAfterMs)}): the computers taking work are full or not claiming; see \`runledger status\`, and add slots (\`--slots\`) or a computer.`;
  }
  // Said again only when what is wrong changes, not as its count of minutes moves.
  if (banner.dataset.kind === kind && banner.hidden === !text && (kind !== 'no_taker' || banner.textContent === text.replaceAll('`', ''))) {
    if (kind === 'waited_long') banner.replaceChildren(...withCode(text));
    return;
  }
  banner.replaceChildren(...withCode(text));
  banner.hidden = !text;
  banner.dataset.kind = kind;
}

function renderClaims(snapshot) {
  const host = document.getElementById('claims');
  if (snapshot.claims.length === 0) {
    host.replaceChildren(el('p', { class: 'empty' }, 'No open claims: no run is claimed and unfinished.'));
    return;
  }
  replaceKeepingFocus(
    host,
    table({
      caption: `${snapshot.claims.length + snapshot.more.claims} claimed run${snapshot.claims.length + snapshot.more.claims === 1 ? '' : 's'} not yet finished${snapshot.more.claims ? ` (the first ${snapshot.claims.length} listed)` : ''}: each lease lives while its computer heartbeats`,
      columns: ['Run', 'Lane', 'Held by', 'Claimed at (UTC)', 'Held'],
      rows: snapshot.claims.map((claim) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row' }, runLink(claim.runId)),
          el('td', {}, laneLink(claim.lane)),
          el('td', {}, claim.computerId),
          el('td', {}, utcTime(claim.claimedAt)),
          el('td', {}, el('span', { role: 'timer', 'data-since': claim.claimedAt })),
        ),
      ),
    }),
  );
}

function renderSessions(snapshot) {
  const host = document.getElementById('sessions');
  const note = el(
    'p',
    { class: 'hint' },
    'A session is closed between turns (its process stopped) and kept: the next turn of its lane resumes it. Each row says its latest close as the log records it (closing, deferred and why, closed, failed).',
  );
  if (snapshot.sessions.length === 0) {
    host.replaceChildren(el('p', { class: 'empty' }, 'No sessions yet: a session appears here once an agent announces one for a lane.'), note);
    return;
  }
  host.replaceChildren(
    table({
      caption: `Agent sessions kept for each lane’s next turn, and their close state${snapshot.more.sessions ? ` (${snapshot.sessions.length} listed, those of the lanes above first; ${snapshot.more.sessions} more)` : ''}`,
      columns: ['Session', 'Computer', 'Lane', 'Close state'],
      rows: snapshot.sessions.map((s) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row' }, el('code', {}, s.sessionId)),
          el('td', {}, s.computer),
          el('td', {}, laneLink(s.lane)),
          el(
            'td',
            {},
            s.close ? `${s.close.state}${s.close.why ? `: ${s.close.why}` : ''}` : el('span', { class: 'muted' }, 'open: no close recorded yet'),
          ),
        ),
      ),
    }),
    note,
  );
}

function renderComputers(snapshot) {
  const host = document.getElementById('computers');
  if (snapshot.computers.length === 0) {
    host.replaceChildren(el('p', { class: 'empty' }, 'No computers are registered on this board.'));
    return;
  }
  const connected = snapshot.computers.filter((c) => c.connected).length;
  host.replaceChildren(
    table({
      caption: `${connected} of ${snapshot.computers.length} computer${snapshot.computers.length === 1 ? '' : 's'} connected to the push stream${snapshot.more.computers ? `, and ${snapshot.more.computers} more not listed` : ''}`,
      columns: ['Computer', 'Push stream', 'Slots in use', 'Scheduler'],
      rows: snapshot.computers.map((c) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row' }, c.id),
          el(
            'td',
            {},
            el('span', { class: `badge ${c.connected ? 'state-running' : 'state-offline'}` }, c.connected ? 'connected' : 'not connected'),
          ),
          el('td', {}, c.slots === null ? el('span', { class: 'muted' }, 'no queue in this log yet') : `${c.inUse} of ${c.slots}`),
          el(
            'td',
            {},
            !c.connected
              ? 'offline: takes nothing until its daemon connects again'
              : c.draining
                ? 'draining: nothing new starts'
                : c.held
                  ? 'held: nothing starts'
                  : 'taking runs',
            // A login at its usage limit starts nothing on it until then, in its agent's words.
            ...(c.limits ?? []).map((limit) =>
              el('div', { class: 'login-limit' }, `login ${limit.login}: at its usage limit until `, utcTime(limit.until), ` — “${limit.words}”`),
            ),
          ),
        ),
      ),
    }),
  );
}

/** What a tally cost: unknown when none of its runs reported a cost (a Codex turn reports tokens only), never $0. */
function tallyCost(t) {
  if (!t.costRuns) return el('span', { class: 'muted' }, 'unknown');
  const unknown = t.runs - t.costRuns;
  return [costText(t.costUsd), unknown > 0 ? el('span', { class: 'muted' }, ` (${unknown} unknown)`) : null];
}

/** The last day's usage, per login then per lane (docs/rules.md#wire-and-cli `usage`, as the completions reported it). */
function renderUsage(snapshot) {
  const host = document.getElementById('usage');
  const usage = snapshot.usage;
  const rows = usage
    ? [...Object.entries(usage.logins).map(([id, t]) => ['login', id, t]), ...Object.entries(usage.lanes).map(([id, t]) => ['lane', id, t])]
    : [];
  if (rows.length === 0) {
    host.replaceChildren(el('p', { class: 'empty' }, 'No run of the last day reported a usage.'));
    return;
  }
  host.replaceChildren(
    table({
      caption: [
        'Since ',
        utcTime(usage.since),
        ' UTC',
        usage.moreLanes ? `, the ${Object.keys(usage.lanes).length} costliest lanes (and ${usage.moreLanes} more)` : '',
      ],
      columns: ['Login or lane', 'Runs', 'Cost (USD)', 'Input tokens', 'Output tokens', 'Cached input tokens'],
      rows: rows.map(([kind, id, t]) =>
        el(
          'tr',
          { 'data-usage': `${kind}:${id}` },
          el('th', { scope: 'row' }, `${kind} `, kind === 'lane' ? laneLink(id) : el('code', {}, id)),
          el('td', {}, String(t.runs)),
          el('td', {}, tallyCost(t)),
          el('td', {}, String(t.inputTokens)),
          el('td', {}, String(t.outputTokens)),
          el('td', {}, String(t.cachedInputTokens)),
        ),
      ),
    }),
  );
}

/** The one sentence a screen reader hears when the board changes: counts, not every tick. */
function announce(snapshot) {
  const { queued, parked, claiming, running } = snapshot.counts;
  const connected = snapshot.computers.filter((c) => c.connected).length;
  const claims = snapshot.claims.length + snapshot.more.claims;
  const text = `${running} running, ${claiming} claiming, ${parked} parked, ${queued} queued; ${claims} open claim${claims === 1 ? '' : 's'}; ${connected} computer${connected === 1 ? '' : 's'} connected.`;
  if (text === lastSummary) return;
  lastSummary = text;
  document.getElementById('summary').textContent = text;
}

function addActivity(events) {
  const list = document.getElementById('activity');
  const fresh = events.filter((e) => e.seq > lastSeq);
  if (fresh.length === 0) return;
  lastSeq = fresh.at(-1).seq;
  for (const e of fresh) {
    list.prepend(
      el(
        'li',
        { 'data-seq': e.seq, class: e.bookkeeping ? 'bookkeeping' : null },
        utcTime(e.at),
        ' ',
        e.runId ? [runLink(e.runId), ' '] : null,
        el('code', { class: 'step' }, e.step),
        ' ',
        el('span', { class: 'reason' }, e.reason),
        e.owner ? el('span', { class: 'muted' }, ` · ${e.owner}`) : null,
      ),
    );
  }
  // Each kind kept to its own cap: bookkeeping never pushes a decision out of the list.
  for (const selector of ['li.bookkeeping', 'li:not(.bookkeeping)']) {
    const items = list.querySelectorAll(selector);
    for (let i = MAX_ACTIVITY; i < items.length; i++) items[i].remove();
  }
}

const toggle = document.getElementById('show-bookkeeping');
const showBookkeeping = () => (document.getElementById('activity').dataset.bookkeeping = toggle.checked ? 'shown' : 'hidden');
toggle.addEventListener('change', showBookkeeping);
showBookkeeping();

follow('', {
  onState: showConnection,
  onMessage(message) {
    if (message.type === 'hello') {
      // A reconnect: the activity list starts over from the log's tail, as the server sees it now.
      document.getElementById('activity').replaceChildren();
      lastSeq = 0;
      addActivity(message.recent);
      view = message.snapshot;
      version = message.version;
      render(view);
    } else if (message.type === 'delta') {
      // A delta from a view this page does not hold: it reconnects for a fresh one.
      if (view === null || message.from !== version) return false;
      view = applyDelta(view, message);
      version = message.to;
      render(view);
    } else if (message.type === 'events') {
      addActivity(message.events);
    }
    return true;
  },
});
document.getElementById('new-lane-box').replaceChildren(newLaneBox());
tick = startTicking();
setInterval(renderStuck, 1000);
