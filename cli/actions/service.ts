import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeOf, messageOf } from '../../events/thrown.ts';
import packageJson from '../../package.json' with { type: 'json' };
import { isPostgresUrl } from '../../runtime/store/logLocation.ts';
import type { daemonDefinition } from '../commands/daemon.ts';
import type { ServiceInstallOptions, ServicePrintOptions } from '../commands/service.ts';
import { LOG_FILE } from '../shared/home.ts';
import { type ServiceUnit, shellWord, unitText } from './serviceUnit.ts';

/**
 * `runledger service print|install`: a systemd unit for the daemon. It runs this runledger with this
 * node (absolute paths, so an upgrade in place is taken at the next restart and no PATH is needed to
 * find them), on the log the user's commands find (the home is pinned in the unit's environment, so a
 * `submit` typed later finds its token), with the PATH the agent was found on here.
 */

/** This installation's launcher: dist/cli/actions/ → the package's cli/runledger.js. */
const LAUNCHER = fileURLToPath(new URL('../../../cli/runledger.js', import.meta.url));

/** Settings an agent keeps its sessions under: a service that lacks them would start every turn afresh. */
const AGENT_SETTINGS = ['CLAUDE_CONFIG_DIR', 'CODEX_HOME'] as const;

/** The daemon's command definition (its options, no action), handed over by the command that runs this. */
type DaemonDefinition = typeof daemonDefinition;

export async function printService(args: readonly string[], o: ServicePrintOptions, daemon: DaemonDefinition): Promise<void> {
  process.stdout.write(unitText(await serviceUnit(args, Boolean(o.user), `service print${o.user ? ' --user' : ''}`, daemon)));
}

export async function installService(args: readonly string[], o: ServiceInstallOptions, daemon: DaemonDefinition): Promise<void> {
  const user = Boolean(o.user);
  const unit = await serviceUnit(args, user, `service install${user ? ' --user' : ''}`, daemon);
  const path = unitPath(user);
  if (existsSync(path) && !o.force) {
    throw new Error(
      `${path} exists already: --force replaces it (then \`${systemctl(user)} daemon-reload\` and \`${systemctl(user)} restart runledger\`)`,
    );
  }
  try {
    mkdirSync(dirname(path), { recursive: true });
    // Whole or not at all: systemd may read the folder at any moment.
    const staged = `${path}.${process.pid}.tmp`;
    writeFileSync(staged, unitText(unit), { mode: 0o644 });
    renameSync(staged, path);
  } catch (error) {
    if (codeOf(error) === 'EACCES' || codeOf(error) === 'EPERM')
      throw new Error(`cannot write ${path} (${messageOf(error)}): run it as root (sudo), or install a unit of your own with --user`);
    throw error;
  }
  const ctl = systemctl(user);
  const lines = [
    `wrote ${path}: runledger daemon ${args.map(shellWord).join(' ')}`,
    'start it now and at every boot:',
    `  ${ctl} daemon-reload`,
    `  ${ctl} enable --now runledger`,
    ...(user ? ['keep it running while you are logged out:', `  loginctl enable-linger ${userInfo().username}`] : []),
    'its output:',
    `  journalctl${user ? ' --user' : ''} -u runledger -f`,
    'after an upgrade (npm install -g the new package):',
    `  ${ctl} restart runledger`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

function systemctl(user: boolean): string {
  return user ? 'systemctl --user' : 'systemctl';
}

/** Where systemd reads the unit: the user's configuration folder, or the system's. */
function unitPath(user: boolean): string {
  if (!user) return '/etc/systemd/system/runledger.service';
  const config = process.env.XDG_CONFIG_HOME && isAbsolute(process.env.XDG_CONFIG_HOME) ? process.env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(config, 'systemd/user/runledger.service');
}

/** The unit for `runledger daemon ARGS`, the arguments checked as the daemon checks them. */
async function serviceUnit(args: readonly string[], user: boolean, asked: string, definition: DaemonDefinition): Promise<ServiceUnit> {
  const daemon = await parsedDaemonArgs(args, definition);
  const o = daemon.options;
  const given = (name: string) => daemon.source(name) === 'cli';
  if (o.exec === undefined && !o.demo) {
    throw new Error(
      `the unit would run a daemon with no agent, which refuses to start: give the daemon's arguments after --, e.g. \`runledger ${asked} -- --exec claude\``,
    );
  }
  if (given('token')) {
    throw new Error(
      'a token in the unit is readable by every local user (and in `ps`): give the daemon --token-file FILE (mode 0600) instead of --token',
    );
  }
  if (o.server !== undefined && o.tokenFile === undefined) {
    throw new Error(
      "a computer joining a board needs its token: give the daemon --token-file FILE (this shell's RUNLEDGER_COMPUTER_TOKEN is not copied into a unit, which every local user can read)",
    );
  }
  for (const [flag, path] of [
    ['--db', given('db') ? o.db : undefined],
    ['--token-file', o.tokenFile],
  ] as const) {
    if (path !== undefined && !isPostgresUrl(path) && !isAbsolute(path))
      throw new Error(`${flag} ${path} is relative: the service runs in its home folder, not here; give it as an absolute path (${resolve(path)})`);
  }
  return {
    user,
    node: process.execPath,
    launcher: LAUNCHER,
    daemonArgs: args,
    drainS: o.drainS,
    environment: environment(given('db') ? null : o.db),
    runAs: user ? null : userInfo().username,
    version: packageJson.version,
    madeBy: `made by \`runledger ${asked} -- ${args.map(shellWord).join(' ')}\``,
  };
}

/**
 * The unit's environment: the log the user's own commands find (pinned, so the service and a `submit`
 * typed later agree whatever XDG_DATA_HOME the service manager has), the PATH the agent is found on
 * here, and where the agents keep their sessions. No secret: a unit is readable by every local user.
 */
function environment(log: string | null): [string, string][] {
  const env: [string, string][] = [];
  if (log !== null) {
    const file = resolve(log);
    env.push(basename(file) === LOG_FILE ? ['RUNLEDGER_HOME', dirname(file)] : ['RUNLEDGER_DB', file]);
  }
  const path = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const nodeFolder = dirname(process.execPath);
  env.push(['PATH', (path.includes(nodeFolder) ? path : [nodeFolder, ...path]).join(delimiter)]);
  for (const name of AGENT_SETTINGS) {
    const value = process.env[name];
    if (value) env.push([name, value]);
  }
  return env;
}

/**
 * The daemon's arguments parsed by its own definition (no action runs): what it would refuse is
 * refused now, in its words, and the defaults (`--drain-s`) are its own.
 */
async function parsedDaemonArgs(args: readonly string[], daemonDefinition: DaemonDefinition) {
  const definition = daemonDefinition()
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(`in the daemon's arguments (after --): ${text}`) })
    .action(() => undefined);
  await definition.parseAsync([...args], { from: 'user' });
  return { options: definition.opts(), source: (name: string) => definition.getOptionValueSource(name) };
}
