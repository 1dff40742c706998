// Acting from the pages: each action is the HTTP API call `runledger submit` and `runledger cancel`
// make (POST /v1/runs, POST /v1/runs/{id}/cancel), carried by the submit token the sign-in form
// traded for an HttpOnly cookie: this script never sees the token after the form sends it.
import { el, laneLink, runLink } from './live.js';

/** Whether this browser holds the sign-in cookie: asked once, then known from the answers. */
let signedIn = null;
const waiting = new Set();

async function signInState() {
  if (signedIn !== null) return signedIn;
  try {
    const response = await fetch('/session');
    signedIn = response.ok && (await response.json()).signed_in === true;
  } catch {
    signedIn = false;
  }
  return signedIn;
}

function setSignedIn(value) {
  signedIn = value;
  for (const redraw of waiting) redraw();
}

/** Says the outcome of an action in the page's action status (a polite live region). */
function tell(...parts) {
  const status = document.getElementById('action-status');
  if (status) status.replaceChildren(...parts);
}

/** A refusal in words: the board's own message, which names the thing and what to do. */
async function refusalOf(response) {
  try {
    const body = await response.json();
    const detail = body.detail;
    if (typeof detail === 'string') return detail;
    return detail?.message ?? detail?.error ?? `HTTP ${response.status}`;
  } catch {
    return `HTTP ${response.status}`;
  }
}

/** POSTs JSON to the board's API with the sign-in cookie; a 401 asks for the token again. */
async function post(path, body) {
  const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status === 401) setSignedIn(false);
  return response;
}

/** A new turn of `lane`: resolves to its run id, or throws the board's refusal in words. */
export async function submitTurn(lane, prompt) {
  const response = await post('/v1/runs', { lane, prompt });
  if (response.status === 201) return (await response.json()).run_id;
  if (response.status === 401) throw new Error('the board wants a submit token: sign in above, then send again');
  throw new Error(await refusalOf(response));
}

export async function cancelRun(runId) {
  const response = await post(`/v1/runs/${encodeURIComponent(runId)}/cancel`, {});
  if (response.status === 202) return;
  if (response.status === 401) throw new Error('the board wants a submit token: sign in, then cancel again');
  throw new Error(await refusalOf(response));
}

/** A finished run's prompt, sent again as a new turn of its lane (its whole prompt, read from the board). */
export async function runAgain(runId) {
  const details = await fetch(`/v1/runs/${encodeURIComponent(runId)}/details`);
  if (!details.ok) throw new Error(`its prompt could not be read: ${await refusalOf(details)}`);
  const run = await details.json();
  if (!run.lane) throw new Error('the log does not say which lane it was in');
  return { runId: await submitTurn(run.lane, run.prompt), lane: run.lane };
}

/**
 * The sign-in form: the board's submit token (the `token` file beside its log, or one
 * `runledger token add` printed), traded once for an HttpOnly cookie.
 */
export function signInForm() {
  const input = el('input', {
    id: 'sign-in-token',
    name: 'token',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
    spellcheck: 'false',
  });
  const said = el('p', { id: 'sign-in-status', role: 'status', class: 'form-status' });
  const form = el(
    'form',
    { class: 'sign-in', id: 'sign-in', 'aria-labelledby': 'sign-in-heading' },
    el('h3', { id: 'sign-in-heading' }, 'Sign in to act'),
    el(
      'p',
      { class: 'hint' },
      'Sending, cancelling and running again need the board’s submit token: the ',
      el('code', {}, 'token'),
      ' file beside its log, or one ',
      el('code', {}, 'runledger token add'),
      ' printed. This browser keeps it in a cookie no script can read.',
    ),
    el('p', {}, el('label', { for: 'sign-in-token' }, 'Submit token'), input),
    el('p', { class: 'actions' }, el('button', { type: 'submit' }, 'Sign in')),
    said,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    said.textContent = 'Signing in…';
    try {
      const response = await fetch('/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: input.value.trim() }),
      });
      if (response.ok) {
        input.value = '';
        setSignedIn(true);
        return;
      }
      said.textContent = `Not signed in: ${await refusalOf(response)}.`;
    } catch (error) {
      said.textContent = `The board did not answer (${error.message}): try again once it runs.`;
    }
  });
  return form;
}

/** `make()` drawn into `host` once signed in, the sign-in form until then (and again if the cookie stops working). */
export function whenSignedIn(host, make) {
  const draw = () => host.replaceChildren(signedIn ? make() : signInForm());
  waiting.add(draw);
  void signInState().then(draw);
}

/** The box under a lane's conversation: its next turn's prompt, sent as `runledger submit --lane` would. */
export function sendBox(lane) {
  const host = el('div', { class: 'send-box' });
  whenSignedIn(host, () => {
    const prompt = el('textarea', { id: 'next-prompt', name: 'prompt', rows: '4', required: true, maxlength: '4194304' });
    const form = el(
      'form',
      { class: 'send', id: 'send-form' },
      el('p', {}, el('label', { for: 'next-prompt' }, `Prompt for lane ${lane}’s next turn`), prompt),
      el('p', { class: 'actions' }, el('button', { type: 'submit', id: 'send-button' }, 'Send'), ' ', signOutButton()),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const text = prompt.value;
      if (text.trim() === '') return;
      tell('Sending…');
      try {
        const runId = await submitTurn(lane, text);
        prompt.value = '';
        tell('Sent as run ', runLink(runId), ': it appears above and runs once the turns before it ended.');
      } catch (error) {
        tell(`Not sent: ${error.message}.`);
      }
    });
    return form;
  });
  return host;
}

/** A new lane: its name and first prompt; once sent, its page. */
export function newLaneBox() {
  const host = el('div', { class: 'send-box' });
  whenSignedIn(host, () => {
    const name = el('input', {
      id: 'new-lane',
      name: 'lane',
      type: 'text',
      required: true,
      pattern: '[A-Za-z0-9\\-]{1,64}',
      title: 'a lane id: 1 to 64 letters, digits and dashes',
      autocomplete: 'off',
      spellcheck: 'false',
    });
    const prompt = el('textarea', { id: 'new-prompt', name: 'prompt', rows: '3', required: true });
    const form = el(
      'form',
      { class: 'send', id: 'new-lane-form' },
      el('p', {}, el('label', { for: 'new-lane' }, 'Lane (letters, digits and dashes)'), name),
      el('p', {}, el('label', { for: 'new-prompt' }, 'Its first prompt'), prompt),
      el('p', { class: 'actions' }, el('button', { type: 'submit' }, 'Start the lane'), ' ', signOutButton()),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      tell('Sending…');
      try {
        await submitTurn(name.value.trim(), prompt.value);
        location.assign(`/lanes/${encodeURIComponent(name.value.trim())}`);
      } catch (error) {
        tell(`Not started: ${error.message}.`);
      }
    });
    return form;
  });
  return host;
}

function signOutButton() {
  const button = el('button', { type: 'button', class: 'quiet' }, 'Sign out');
  button.addEventListener('click', async () => {
    await fetch('/session', { method: 'DELETE' }).catch(() => undefined);
    setSignedIn(false);
  });
  return button;
}

/** A turn's buttons: cancel while it is open, run again once it ended. The outcome is said in the action status. */
export function turnActions(turn) {
  const live = turn.state === 'queued' || turn.state === 'claimed' || turn.state === 'running';
  const button = live
    ? el('button', { type: 'button', class: 'cancel', 'data-action': 'cancel' }, 'Cancel this turn')
    : el('button', { type: 'button', class: 'again', 'data-action': 'run-again' }, 'Run its prompt again');
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      if (live) {
        await cancelRun(turn.run_id);
        tell('Cancel asked for run ', runLink(turn.run_id), ': the board stops it and says so here.');
      } else {
        const again = await runAgain(turn.run_id);
        tell('Sent again as run ', runLink(again.runId), ' of lane ', laneLink(again.lane), '.');
        return again;
      }
    } catch (error) {
      tell(`${live ? 'Not cancelled' : 'Not sent again'}: ${error.message}.`);
    } finally {
      button.disabled = false;
    }
  });
  return el('p', { class: 'turn-actions' }, button);
}
