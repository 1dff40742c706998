import { formatStatus, type StatusView } from '../../projections/statusView.ts';
import type { StatusOptions } from '../commands/client.ts';
import { boardCall, refusal } from '../shared/boardCall.ts';
import { print } from '../shared/options.ts';

/** `runledger status`: the board's live view (queue per lane, running, parked, claims). */
export async function status(o: StatusOptions): Promise<void> {
  const answer = await boardCall(o, 'GET', '/v1/status');
  if (answer.status !== 200) throw new Error(refusal(answer));
  print(o, answer.body, () => formatStatus(answer.body as unknown as StatusView));
}
