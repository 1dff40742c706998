import { Command } from '@commander-js/extra-typings';
import { helpAfter, type OptionsOf } from '../shared/options.ts';
import { daemonDefinition } from './daemon.ts';

const print = () =>
  new Command('print')
    .description('print a systemd unit that runs `runledger daemon` with the arguments after --, as this runledger and this node')
    .option('--user', "a unit of the user's own systemd (systemctl --user), running as you; else a system unit, running as you too (User=)")
    .argument('[daemon-args...]', 'the arguments of `runledger daemon`, after --');

const install = () =>
  new Command('install')
    .description(
      'write that unit where systemd reads it (~/.config/systemd/user/runledger.service with --user, else /etc/systemd/system/runledger.service) and say the systemctl commands that start it',
    )
    .option('--user', "the user's own systemd (systemctl --user); else the system's (needs root to write /etc/systemd/system)")
    .option('--force', 'replace a unit written before (an upgrade, other arguments)')
    .argument('[daemon-args...]', 'the arguments of `runledger daemon`, after --');

export type ServicePrintOptions = OptionsOf<ReturnType<typeof print>>;
export type ServiceInstallOptions = OptionsOf<ReturnType<typeof install>>;

/** `runledger service print|install`; what they do is in ../actions/service.ts, loaded when one runs. */
export function serviceCommand() {
  return new Command('service')
    .description('run the daemon as a systemd service: restarted on failure, stopped with time to drain')
    .addCommand(
      helpAfter(print(), [
        'runledger service print --user -- --exec claude --slots 2',
        'runledger service print -- --exec "codex exec" --server http://board.example:7420 --computer c2 --token-file /etc/runledger/c2.token',
      ]).action(async (args, options) => (await import('../actions/service.ts')).printService(args, options, daemonDefinition)),
    )
    .addCommand(
      helpAfter(install(), [
        'runledger service install --user -- --exec claude',
        'sudo runledger service install -- --exec claude --port 7420',
      ]).action(async (args, options) => (await import('../actions/service.ts')).installService(args, options, daemonDefinition)),
    );
}
