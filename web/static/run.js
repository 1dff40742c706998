// A run's page (`/runs/{id}`): what the board knows of it, and its timeline, kept live.
import { badge, el, follow, shortId, showConnection, table, utcTime } from './live.js';

const runId = decodeURIComponent(location.pathname.split('/').pop());
let entries = [];
let lastSeq = 0;

document.getElementById('run-id').textContent = runId;
document.getElementById('crumb').textContent = `Run ${shortId(runId)}`;
document.title = `runledger · run ${shortId(runId)}`;

function renderFacts(run) {
  const facts = document.getElementById('facts');
  if (!run) {
    facts.replaceChildren();
    return;
  }
  const item = (term, ...value) => [el('dt', {}, term), el('dd', {}, ...value)];
  facts.replaceChildren(
    ...item('Lane', el('code', {}, run.lane)),
    ...item('State', badge(run.state)),
    ...item('Computer', run.computerId ?? el('span', { class: 'muted' }, 'none yet')),
    ...item('Submitted', utcTime(run.submittedAt), ' UTC'),
    ...(run.error ? item('Error', run.error) : []),
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

function renderTimeline() {
  const host = document.getElementById('timeline');
  if (entries.length === 0) {
    host.replaceChildren(
      el('p', { class: 'empty' }, 'The log holds nothing about this run yet. If it was just submitted, its entries appear here as they are written.'),
    );
    return;
  }
  host.replaceChildren(
    table({
      caption: `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}, oldest first: each input the run met and each decision taken from it, with its reason`,
      columns: ['Time (UTC)', 'By', 'Step', 'Reason', 'Seq', 'Answers'],
      rows: entries.map((e) => row(e, false)),
      className: 'timeline',
    }),
  );
}

function append(fresh) {
  const body = document.querySelector('#timeline tbody');
  if (!body) {
    renderTimeline();
  } else {
    for (const e of fresh) body.append(row(e, true));
    document.querySelector('#timeline caption').firstChild.textContent =
      `${entries.length} entries, oldest first: each input the run met and each decision taken from it, with its reason`;
  }
}

function say(text) {
  document.getElementById('summary').textContent = text;
}

follow(`?run=${encodeURIComponent(runId)}`, {
  onState: showConnection,
  onMessage(message) {
    if (message.type === 'hello') {
      entries = message.entries;
      lastSeq = entries.at(-1)?.seq ?? 0;
      renderFacts(message.run);
      renderTimeline();
      const last = entries.at(-1);
      say(entries.length === 0 ? 'No entries yet; new ones appear as they are written.' : `${entries.length} entries; the latest: ${last.reason}.`);
    } else if (message.type === 'entries') {
      const fresh = message.entries.filter((e) => e.seq > lastSeq);
      if (fresh.length === 0) return;
      lastSeq = fresh.at(-1).seq;
      entries = entries.concat(fresh);
      renderFacts(message.run);
      append(fresh);
      say(`${fresh.length} new entr${fresh.length === 1 ? 'y' : 'ies'}; the latest: ${fresh.at(-1).reason}.`);
    }
  },
});
