// A run's page (`/runs/{id}`): what the board knows of it, and its timeline, kept live.
import { turnActions } from './actions.js';
import { badge, costText, el, follow, laneLink, shortId, showConnection, startTicking, took, utcTime } from './live.js';

const runId = decodeURIComponent(location.pathname.split('/').pop());
let entries = [];
let lastSeq = 0;

document.getElementById('run-id').textContent = runId;
document.getElementById('crumb').textContent = `Run ${shortId(runId)}`;
document.title = `runledger · run ${shortId(runId)}`;

let record = null;
/** What its agent is doing now (`{text, at}`), from the board's memory: only while it runs. */
let progress = null;

/** `cost $0.0123 · 12 in / 7 out / 3000 cached tokens`: what its agent reported. */
function usageText(u) {
  const tokens = [
    u.inputTokens === undefined ? null : `${u.inputTokens} in`,
    u.outputTokens === undefined ? null : `${u.outputTokens} out`,
    u.cachedInputTokens === undefined ? null : `${u.cachedInputTokens} cached`,
  ].filter(Boolean);
  return [u.costUsd === undefined ? null : `cost $${Math.round(u.costUsd * 10_000) / 10_000}`, tokens.length ? `${tokens.join(' / ')} tokens` : null]
    .filter(Boolean)
    .join(' · ');
}

/** `5 s`, `2 min 3 s`; counting on from now while the phase lasts. */
function span(from, to) {
  if (from === null) return el('span', { class: 'muted' }, '—');
  if (to !== null) return took(to - from);
  return [el('span', { role: 'timer', 'data-since': from }), el('span', { class: 'muted' }, ' and counting')];
}

function when(ms) {
  return ms === null
    ? el('span', { class: 'muted' }, 'not yet')
    : [utcTime(ms, true), ' ', el('span', { class: 'muted' }, new Date(ms).toISOString().slice(0, 10))];
}

function renderFacts() {
  const facts = document.getElementById('facts');
  if (!record || record.lane === null) {
    facts.replaceChildren();
    return;
  }
  const r = record;
  const item = (term, id, ...value) => [el('dt', {}, term), el('dd', { id: `fact-${id}` }, ...value)];
  // How long its agent ran: its process's start to its exit (the board's claim and first heartbeat
  // come before it, its completion after), counted on from its start while it runs.
  const began = r.processBeganAt ?? r.startedAt;
  const ranFor =
    r.durationMs !== null && r.durationMs !== undefined
      ? took(r.durationMs)
      : r.finishedAt === null && began !== null
        ? span(began, null)
        : el('span', { class: 'muted' }, '—');
  facts.replaceChildren(
    ...item('Lane', 'lane', laneLink(r.lane)),
    ...item('State', 'state', r.state ? badge(r.state) : el('span', { class: 'muted' }, 'unknown')),
    ...item('Computer', 'computer', r.computer ?? el('span', { class: 'muted' }, 'none yet')),
    ...(r.exit ? item('Its process', 'exit', r.exit) : []),
    ...(progress && r.finishedAt === null
      ? item('Doing now', 'progress', progress.text, el('span', { class: 'muted' }, ` (since ${new Date(progress.at).toISOString().slice(11, 19)})`))
      : []),
    ...(r.usage ? item('Usage', 'usage', usageText(r.usage)) : []),
    ...(r.finishedAt !== null ? item('Cost', 'cost', costText(r.usage?.costUsd)) : []),
    ...item('Submitted', 'submitted', when(r.submittedAt)),
    ...item('Claimed', 'claimed', when(r.claimedAt)),
    ...item('Started', 'started', when(r.startedAt)),
    ...item('Finished', 'finished', when(r.finishedAt)),
    ...item('Queued for', 'queued-for', span(r.submittedAt, r.claimedAt ?? r.finishedAt)),
    ...item('Ran for', 'ran-for', ranFor),
    ...item('Total', 'total', span(r.submittedAt, r.finishedAt)),
  );
  tick();
}

/** `2 commits, 3 files changed (+10 −2), 1 left uncommitted`, or `changed nothing`: as `runledger audit` says it. */
function changesText(c) {
  if (c.commitCount === 0 && c.filesChanged === 0) return 'It changed nothing.';
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const parts = [];
  if (c.commitCount > 0) parts.push(plural(c.commitCount, 'commit'));
  parts.push(
    c.filesChanged > 0 ? `${plural(c.filesChanged, 'file')} changed (+${c.insertions} −${c.deletions})` : 'no file differs from where it began',
  );
  if (c.uncommittedFiles > 0) parts.push(`${c.uncommittedFiles} left uncommitted`);
  return `${parts.join(', ')}.`;
}

/** What a turn in a lane's worktree changed: the summary, its commits, and the diff when this log holds it. */
function renderChanges() {
  const section = document.getElementById('changes-section');
  const c = record?.changes ?? null;
  section.hidden = c === null;
  if (c === null) return;
  const item = (term, id, ...value) => [el('dt', {}, term), el('dd', { id: `changes-${id}` }, ...value)];
  const sha = (full) => el('code', { title: full }, full.slice(0, 12));
  const listed = c.commits.length;
  const commits =
    c.commitCount === 0
      ? el('span', { class: 'muted' }, 'none')
      : el(
          'ol',
          { class: 'commit-list' },
          ...c.commits.map((commit) => el('li', {}, sha(commit.sha), ' ', commit.subject)),
          ...(c.commitCount > listed ? [el('li', { class: 'muted' }, `and ${c.commitCount - listed} more`)] : []),
        );
  const d = record.diff;
  document
    .getElementById('changes')
    .replaceChildren(
      el('p', { id: 'changes-summary', class: 'changes-summary' }, changesText(c)),
      el(
        'dl',
        { class: 'facts' },
        ...item('Files changed', 'files', String(c.filesChanged)),
        ...item('Insertions', 'insertions', el('span', { class: 'added' }, `+${c.insertions}`)),
        ...item('Deletions', 'deletions', el('span', { class: 'removed' }, `−${c.deletions}`)),
        ...item('Commits', 'commits', commits),
        ...item('Left uncommitted', 'uncommitted', `${c.uncommittedFiles} file${c.uncommittedFiles === 1 ? '' : 's'}`),
        ...item('From', 'base', sha(c.base), el('span', { class: 'muted' }, ' to '), sha(c.head)),
      ),
      d === null
        ? el('p', { class: 'muted' }, `The diff is in its computer's log: runledger show ${shortId(record.runId)} --diff --db <that log>.`)
        : d.text === ''
          ? el('p', { class: 'muted' }, 'No diff: nothing differs.')
          : el(
              'details',
              { class: 'text-block diff' },
              el('summary', {}, `The diff (${d.bytes} bytes${d.cut ? ', cut in the log' : ''})`),
              el('pre', { id: 'diff', tabindex: '0' }, d.text),
            ),
    );
}

/** Cancel while it is open, run its prompt again once it ended: the lane page's buttons. */
function renderActions() {
  const host = document.getElementById('actions');
  if (!record || record.lane === null || record.state === null) {
    host.replaceChildren();
    return;
  }
  const shown = host.dataset.state;
  if (shown === record.state) return;
  host.dataset.state = record.state;
  host.replaceChildren(turnActions({ run_id: record.runId, state: record.state, lane: record.lane }));
  const crumb = document.getElementById('crumb-lane');
  crumb.replaceChildren(el('a', { href: `/lanes/${encodeURIComponent(record.lane)}` }, `Lane ${record.lane}`));
  crumb.hidden = false;
}

function renderTexts() {
  const host = document.getElementById('texts');
  const r = record;
  const block = (id, title, text, none) =>
    el(
      'section',
      { class: 'text-block', 'aria-labelledby': `${id}-heading` },
      el('h3', { id: `${id}-heading` }, title),
      text ? el('pre', { id, tabindex: '0' }, text) : el('p', { id, class: 'muted' }, none),
    );
  host.replaceChildren(
    block('prompt', 'Prompt', r?.prompt, 'The log holds no prompt for it.'),
    block('reply', 'Reply', r?.reply, r?.finishedAt ? 'It left no reply.' : 'No reply yet.'),
    ...(r?.error ? [block('error', 'Error', r.error, '')] : []),
    block(
      'stderr',
      'Stderr (its end)',
      r?.stderrTail,
      r?.exit ? 'Its agent wrote nothing to stderr.' : 'Nothing yet: recorded when its process exits.',
    ),
  );
}

function row(entry, fresh) {
  const by = entry.owner ?? 'board';
  return el(
    'tr',
    { id: `seq-${entry.seq}`, class: fresh ? 'fresh' : null, 'data-step': entry.step },
    el('th', { scope: 'row' }, utcTime(entry.at, true)),
    el('td', {}, by),
    el('td', {}, el('code', { class: 'step' }, entry.step)),
    el('td', { class: 'why' }, entry.reason),
    el('td', { class: 'seq' }, String(entry.seq)),
    el('td', { class: 'seq' }, answers(entry.cause)),
  );
}

/** What a decision answers: a link to that entry when it is on this page (an input about another run is not). */
function answers(cause) {
  if (cause === null) return el('span', { class: 'muted' }, 'input');
  if (!entries.some((e) => e.seq === cause)) return el('span', { title: 'an entry about something else: runledger audit shows it' }, `seq ${cause}`);
  return el('a', { href: `#seq-${cause}`, title: `the entry this decision answers (seq ${cause})` }, `seq ${cause}`);
}

const PHASES = [
  ['queued', 'Queued', 'submitted, queued and offered, waiting for a computer to claim it'],
  ['claimed', 'Claimed', 'a computer holds its claim and is starting it'],
  ['running', 'Running', 'its agent runs'],
  ['finished', 'Finished', 'it ended on the board, and what followed'],
];

/** The phase an entry belongs to: where its seq falls among the seqs each phase began at. */
function phaseOf(seq) {
  const p = record?.phases ?? {};
  if (p.finished !== null && p.finished !== undefined && seq >= p.finished) return 'finished';
  if (p.running !== null && p.running !== undefined && seq >= p.running) return 'running';
  if (p.claimed !== null && p.claimed !== undefined && seq >= p.claimed) return 'claimed';
  return 'queued';
}

function renderTimeline(fresh = new Set()) {
  const host = document.getElementById('timeline');
  if (entries.length === 0) {
    host.replaceChildren(
      el('p', { class: 'empty' }, 'The log holds nothing about this run yet. If it was just submitted, its entries appear here as they are written.'),
    );
    return;
  }
  const columns = ['Time (UTC)', 'By', 'Step', 'Reason', 'Seq', 'Answers'];
  const groups = PHASES.map(([key, title, what]) => {
    const rows = entries.filter((e) => phaseOf(e.seq) === key);
    if (rows.length === 0) return null;
    return el(
      'tbody',
      { 'data-phase': key },
      el(
        'tr',
        { class: 'phase' },
        el(
          'th',
          { scope: 'rowgroup', colspan: columns.length, id: `phase-${key}` },
          title,
          el('span', { class: 'muted' }, ` · ${rows.length} entr${rows.length === 1 ? 'y' : 'ies'}: ${what}`),
        ),
      ),
      rows.map((e) => row(e, fresh.has(e.seq))),
    );
  });
  host.replaceChildren(
    el(
      'table',
      { class: 'timeline' },
      el(
        'caption',
        {},
        `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}, oldest first, by phase: each input the run met and each decision taken from it, with its reason`,
      ),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          columns.map((c) => el('th', { scope: 'col' }, c)),
        ),
      ),
      groups,
    ),
  );
}

function say(text) {
  document.getElementById('summary').textContent = text;
}

/**
 * The run in one sentence. A finished run is summed up by its end on the board, not by the latest
 * entry: another computer that was offered it may log its own stale copy's skip after the run
 * succeeded. While it is open, the latest entry of the board or of the computer holding it.
 */
function summary(fresh) {
  const count = `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}`;
  if (entries.length === 0) return 'No entries yet; new ones appear as they are written.';
  const r = record;
  if (r && r.finishedAt !== null && r.state !== null) {
    const end = entries.find((e) => e.seq === r.phases?.finished);
    return `It ${r.state === 'resolved' ? 'was resolved' : r.state}${r.computer ? ` on ${r.computer}` : ''}${end ? `: ${end.reason}` : ''} (${count}).`;
  }
  const own = (e) => e.owner === null || e.owner === undefined || r?.computer === null || r?.computer === undefined || e.owner === r.computer;
  const latest = [...entries].reverse().find(own) ?? entries.at(-1);
  return fresh ? `${fresh} new entr${fresh === 1 ? 'y' : 'ies'}; the latest: ${latest.reason}.` : `${count}; the latest: ${latest.reason}.`;
}

follow(`?run=${encodeURIComponent(runId)}`, {
  onState: showConnection,
  onMessage(message) {
    if (message.type === 'hello') {
      entries = message.entries;
      lastSeq = entries.at(-1)?.seq ?? 0;
      record = message.record;
      progress = message.progress ?? null;
      renderFacts();
      renderActions();
      renderChanges();
      renderTexts();
      renderTimeline();
      say(summary(0));
    } else if (message.type === 'entries') {
      const fresh = message.entries.filter((e) => e.seq > lastSeq);
      if (fresh.length === 0) return;
      lastSeq = fresh.at(-1).seq;
      entries = entries.concat(fresh);
      record = message.record;
      renderFacts();
      renderActions();
      renderChanges();
      renderTexts();
      renderTimeline(new Set(fresh.map((e) => e.seq)));
      say(summary(fresh.length));
    } else if (message.type === 'progress') {
      progress = message.progress;
      renderFacts();
    }
  },
});
const tick = startTicking();
