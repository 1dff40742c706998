// A lane's page (`/lanes/{lane}`): its conversation turn by turn, oldest first, kept live; the box
// under it sends the lane's next turn.
import { sendBox, turnActions } from './actions.js';
import { badge, costText, el, follow, runLink, showConnection, startTicking, took, utcTime } from './live.js';

const lane = decodeURIComponent(location.pathname.split('/').pop());
document.getElementById('lane-name').textContent = lane;
document.getElementById('crumb').textContent = `Lane ${lane}`;
document.getElementById('lane-history').href = `/history?lane=${encodeURIComponent(lane)}`;
document.title = `runledger · lane ${lane}`;

let turns = [];
/** What each running turn's agent is doing now (`{text, at}`), as the board heard it from heartbeats. */
const progress = new Map();
const LIVE = new Set(['queued', 'claimed', 'running']);

function when(iso) {
  return iso === undefined ? el('span', { class: 'muted' }, '—') : utcTime(Date.parse(iso));
}

/** How long it took (its agent process's start to its exit), or how long it has run so far. */
function howLong(turn) {
  if (turn.duration_ms !== undefined) return took(turn.duration_ms);
  if (turn.state === 'running' && turn.started_at !== undefined)
    return [el('span', { role: 'timer', 'data-since': Date.parse(turn.started_at) }), el('span', { class: 'muted' }, ' so far')];
  return el('span', { class: 'muted' }, LIVE.has(turn.state) ? 'not started' : '—');
}

function text(className, label, body) {
  return el('div', { class: `turn-text ${className}` }, el('p', { class: 'turn-label' }, label), el('pre', { tabindex: '0' }, body));
}

/** What the turn said, or what it is doing now, or why there is nothing yet. */
function answer(turn) {
  const parts = [];
  if (turn.reply) parts.push(text('reply', 'Reply', turn.reply));
  if (turn.error) parts.push(text('error', 'Error', turn.error));
  if (parts.length > 0) return parts;
  const doing = progress.get(turn.run_id);
  if (turn.state === 'running' || turn.state === 'claimed') {
    return el(
      'p',
      { class: 'doing', 'data-progress': turn.run_id },
      el('span', { class: 'turn-label' }, 'Doing now: '),
      doing
        ? [doing.text, doing.at === null ? null : el('span', { class: 'muted' }, ` (since ${new Date(doing.at).toISOString().slice(11, 19)})`)]
        : el('span', { class: 'muted' }, 'starting; its agent has reported nothing yet'),
    );
  }
  if (turn.state === 'queued') return el('p', { class: 'muted' }, 'Waiting for its turn: a computer takes it once the turns before it ended.');
  return el('p', { class: 'muted' }, 'It left no reply.');
}

/** `changed 1 commit, 2 files (+10 −2)`: what the turn did to its lane's worktree. */
function changesText(c) {
  if (c.commit_count === 0 && c.files_changed === 0) return 'changed nothing';
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const parts = [];
  if (c.commit_count > 0) parts.push(plural(c.commit_count, 'commit'));
  if (c.files_changed > 0) parts.push(`${plural(c.files_changed, 'file')} (+${c.insertions} −${c.deletions})`);
  if (c.uncommitted_files > 0) parts.push(`${c.uncommitted_files} uncommitted`);
  return `changed ${parts.join(', ')}`;
}

function turnItem(turn, index) {
  const facts = el(
    'p',
    { class: 'turn-facts' },
    el('span', { class: 'turn-number' }, `Turn ${index + 1}`),
    ' ',
    runLink(turn.run_id),
    ' ',
    badge(turn.state),
    el('span', { class: 'fact' }, 'on ', turn.computer_id ?? el('span', { class: 'muted' }, 'no computer yet')),
    el('span', { class: 'fact' }, 'asked ', when(turn.submitted_at)),
    el('span', { class: 'fact', 'data-fact': 'took' }, 'took ', howLong(turn)),
    el('span', { class: 'fact', 'data-fact': 'cost' }, costText(turn.usage?.cost_usd)),
    turn.changes ? el('span', { class: 'fact', 'data-fact': 'changes' }, changesText(turn.changes)) : null,
  );
  return el(
    'li',
    { class: 'turn', 'data-run': turn.run_id, 'data-state': turn.state },
    facts,
    text('prompt', 'Prompt', turn.prompt),
    answer(turn),
    turnActions(turn),
  );
}

function render(older) {
  const host = document.getElementById('turns');
  if (turns.length === 0) {
    host.replaceChildren(el('li', { class: 'empty' }, 'This lane has no turns yet: send its first one below.'));
  } else {
    host.replaceChildren(...turns.map(turnItem));
  }
  const note = document.getElementById('older');
  note.hidden = !older;
  note.replaceChildren(
    'Older turns are in the ',
    el('a', { href: `/history?lane=${encodeURIComponent(lane)}` }, 'history of this lane'),
    `: this page shows its newest ${turns.length}.`,
  );
  tick();
}

function say(textLine) {
  document.getElementById('summary').textContent = textLine;
}

function summary() {
  if (turns.length === 0) return 'No turns yet.';
  const last = turns.at(-1);
  const open = turns.filter((t) => LIVE.has(t.state)).length;
  return `${turns.length} turn${turns.length === 1 ? '' : 's'}; ${open === 0 ? 'none open' : `${open} open`}; the latest is ${last.state}.`;
}

follow(`?lane=${encodeURIComponent(lane)}`, {
  onState: showConnection,
  onMessage(message) {
    if (message.type === 'hello' || message.type === 'turns') {
      turns = message.turns;
      for (const turn of turns) {
        if (!LIVE.has(turn.state)) progress.delete(turn.run_id);
        else if (turn.progress !== undefined && !progress.has(turn.run_id)) progress.set(turn.run_id, { text: turn.progress, at: null });
      }
      render(message.older);
      say(summary());
    } else if (message.type === 'progress') {
      if (message.progress === null) progress.delete(message.runId);
      else progress.set(message.runId, message.progress);
      const turn = turns.find((t) => t.run_id === message.runId);
      const item = document.querySelector(`#turns li[data-run="${CSS.escape(message.runId)}"]`);
      if (turn && item && !turn.reply && !turn.error) item.querySelector('.doing')?.replaceWith(answer(turn));
    }
  },
});

document.getElementById('send').replaceChildren(sendBox(lane));
const tick = startTicking();
