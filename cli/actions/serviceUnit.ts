/**
 * The systemd unit that runs `runledger daemon`, as text. Pure: what it runs, with which arguments and
 * environment, and who it runs as, are decided by the caller (./service.ts); this file knows systemd.
 */

export interface ServiceUnit {
  /** A unit of the user's own systemd (`systemctl --user`), else a system unit. */
  readonly user: boolean;
  /** node's absolute path, and the runledger launcher's: the unit runs these, whatever PATH says. */
  readonly node: string;
  readonly launcher: string;
  /** The arguments of `runledger daemon`, as given. */
  readonly daemonArgs: readonly string[];
  /** `--drain-s` in force: the time running turns get to finish once the daemon is told to stop. */
  readonly drainS: number;
  /** Environment= lines: name → value, in order. */
  readonly environment: readonly (readonly [string, string])[];
  /** The account a system unit runs as (User=); a user unit runs as its user. */
  readonly runAs: string | null;
  /** The runledger that wrote it, and how it was asked, for the comment at the top. */
  readonly version: string;
  readonly madeBy: string;
}

/**
 * Beyond the drain: the daemon then reports what it stopped and closes its log; systemd's SIGKILL
 * after TimeoutStopSec must never cut that short.
 */
export const STOP_MARGIN_S = 30;

/**
 * Exit 2 is a usage or environment error (a bad option, no agent, a port taken, another daemon
 * connected as this computer): starting again would only fail again, so systemd does not restart on it.
 */
const NO_RESTART_EXIT = 2;

export function unitText(unit: ServiceUnit): string {
  const execStart = [unit.node, unit.launcher, 'daemon', ...unit.daemonArgs].map(systemdWord).join(' ');
  return [
    `# runledger ${unit.version}: ${unit.madeBy}`,
    '# Restarted when it fails; stopped with SIGTERM, sent to the daemon alone, which lets running turns',
    '# finish within --drain-s before it exits (KillMode=mixed: the agents get SIGKILL only after that).',
    '[Unit]',
    'Description=runledger daemon: runs AI-agent turns for a team',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${execStart}`,
    ...(unit.runAs !== null ? [`User=${unit.runAs}`] : []),
    'WorkingDirectory=~',
    ...unit.environment.map(([name, value]) => `Environment=${systemdWord(`${name}=${value}`)}`),
    'Restart=on-failure',
    'RestartSec=5',
    `RestartPreventExitStatus=${NO_RESTART_EXIT}`,
    'KillSignal=SIGTERM',
    'KillMode=mixed',
    `TimeoutStopSec=${unit.drainS + STOP_MARGIN_S}`,
    '',
    '[Install]',
    `WantedBy=${unit.user ? 'default.target' : 'multi-user.target'}`,
    '',
  ].join('\n');
}

/**
 * One word of a unit's command line or Environment= as systemd reads it: `%` is a specifier and `$`
 * a variable unless doubled; a word with a space, a quote or a backslash goes in double quotes.
 */
export function systemdWord(word: string): string {
  if (/[\n\r]/.test(word)) throw new Error(`a unit's line cannot hold a line break: ${JSON.stringify(word)}`);
  const escaped = word.replaceAll('%', '%%').replaceAll('$', '$$$$');
  if (/^[A-Za-z0-9_@%+=:,./~$-]+$/.test(escaped)) return escaped;
  return `"${escaped.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** A word as a shell reads it back, for the lines a person reads and may paste (the unit's comment, `install`'s report). */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
