import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, type BrowserContextOptions, chromium } from 'playwright-core';
import { sharedWhileConnected } from '../support/sharedWhileConnected.ts';

/**
 * Debian's Chromium headless shell (`apt-get install chromium-headless-shell`; `.ci/run` installs it):
 * the same Blink and V8 as the browser, without its windowing layers, as playwright itself runs headless
 * pages. The eight browser files cost 62 s of CPU with it and 93 s with the full `chromium` on 2 cores.
 */
const CHROMIUM = '/usr/bin/chromium-headless-shell';
export const hasChromium = existsSync(CHROMIUM);

/**
 * How Chromium runs on these machines: headless, as root (no sandbox), and with nothing that reaches
 * out to Google's hosts, which a closed network refuses many times a second. playwright-core gives
 * every launch a fresh, empty profile of its own.
 */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * One Chromium a vitest worker, for the files it runs one after another (vitest.config.ts, `isolate:
 * false`): a launch, a first page and a close cost about 3 s of CPU on the 2-core machines the tests run
 * on, a context and its page in a running one about 1.3 s. No file closes it; it ends with its worker.
 */
const workerChromium = sharedWhileConnected(async () => {
  chromiumTemp ??= mkdtempSync(join(tmpdir(), 'chromium-'));
  try {
    return await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, env: { ...process.env, TMPDIR: chromiumTemp }, timeout: 20_000 });
  } finally {
    // After the exit handler this launch added, which kills Chromium before this one removes its files.
    process.off('SIGTERM', exitAtOnce).on('SIGTERM', exitAtOnce);
    process.off('exit', removeChromiumTemp).on('exit', removeChromiumTemp);
  }
});

/**
 * Chromium's own temporary files (its process singleton's socket), which it removes only when it ends
 * cleanly: in a folder of the worker's, removed when the worker exits. A short name: the socket's path
 * (this folder, org.chromium.Chromium.XXXXXX/SingletonSocket) must fit in 107 bytes or Chromium aborts.
 */
let chromiumTemp: string | undefined;

function removeChromiumTemp(): void {
  if (chromiumTemp) rmSync(chromiumTemp, { recursive: true, force: true });
}

/**
 * tinypool stops a worker with SIGTERM, and with SIGKILL a second later. Playwright answers SIGTERM by
 * closing its browsers politely, which a loaded machine does not finish in that second: Chromium then
 * exits on the end of its pipe, but its profile is left in the temp folder. Exiting at once runs
 * playwright's exit handler instead, which kills Chromium and removes its profile before it returns:
 * about 0.2 s at a load of 14 on 2 cores. At 22 the SIGKILL can still cut it short and leave the
 * profile; Chromium itself ends with its worker in any case, on the end of its pipe.
 */
function exitAtOnce(): void {
  process.exit();
}

/**
 * A context of its own in the worker's Chromium: its pages, cookies and storage are seen by no other
 * file or context. The caller closes it (afterAll or afterEach), which closes its pages.
 *
 * Its pages prefer reduced motion, as a user may set: a row that changed is outlined instead of fading
 * for 2.5 s (web/static/app.css), which Chromium paints frame by frame. The tests read the page, not
 * its frames; measured on the browser files, two pairs of runs: Chromium's CPU 35.4 and 32.4 s → 29.3
 * and 28.7 s.
 */
export async function newBrowserContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
  return (await workerChromium()).newContext({ reducedMotion: 'reduce', ...options });
}
