/**
 * The repositories each computer announced (docs/rules.md#workspaces): a run naming one is offered only
 * to a computer that has it, waits saying why while none online does, and a name no computer of the
 * board has is refused at submission.
 */
import { describe, expect, it } from 'vitest';
import { requestAnswer } from '../../actors/board/boardAnswers.ts';
import { WINDOW } from '../../actors/board/offerPolicy.ts';
import { boardSpec, input, pushed, said, summary } from './boardSpec.ts';

const { submit, claim, complete, connected, disconnected, added } = input;
/** `id` added and connected, announcing `repos` (the first its default); none given: an older computer, which announces nothing. */
const online = (id: string, repos?: readonly string[], at = 0) => [added(id, at), connected(id, at, repos)];

describe('board: a run goes to a computer that has its repository', () => {
  it('given c1 with app and c2 with lib, when runs for lib and app come, then each is offered to the computer that has it, and a run naming none to any', () => {
    const spec = boardSpec(...online('c1', ['app']), ...online('c2', ['lib']));
    // c1 comes first by name and is as free as c2: lib goes past it.
    const lib = spec.when(submit('r1', 'A', 1, { repo: 'lib' }));
    expect(summary(lib)).toEqual(['queued r1 #0', 'offered r1 → c2']);
    expect(summary(spec.when(submit('r2', 'B', 2, { repo: 'app' })))).toEqual(['queued r2 #1', 'offered r2 → c1']);
    expect(summary(spec.when(submit('r3', 'C', 3)))).toEqual(['queued r3 #2', 'offered r3 → c1']);
  });

  it('given no computer online that has lib, when a run for lib comes, then it waits saying why, and goes to the first computer with lib that connects', () => {
    const spec = boardSpec(...online('c1', ['app']), ...online('c2', ['lib']), disconnected('c2', 1));
    const queued = spec.when(submit('r1', 'A', 2, { repo: 'lib' }));
    expect(summary(queued)).toEqual(['queued r1 #0']);
    expect(said(queued![0]!)).toMatchObject({ waits: 'offered to nobody yet: no computer online has repository lib' });
    expect(spec.view('r1')).toMatchObject({ state: 'queued' });
    // Another computer without lib connects: it is not pushed the run.
    spec.when(added('c3', 3));
    const c3 = spec.when(connected('c3', 3, ['app', 'web']));
    expect(pushed(c3, spec.state)).toEqual([]);
    // c2 comes back with lib: it is.
    const c2 = spec.when(connected('c2', 4, ['lib']));
    expect(pushed(c2, spec.state)).toEqual(['run.requested r1 → c2']);
    expect(summary(spec.when(claim('r1', 'c2', 5)))).toEqual(['claimed r1 by c2']);
  });

  it("given a lane whose last turn ran on c1, when c1 comes back without lib, then the lane's next turn for lib goes to c2, and its turn for app to c1 still", () => {
    const spec = boardSpec(...online('c1', ['app', 'lib']), ...online('c2', ['lib']));
    expect(summary(spec.when(submit('a0', 'A', 1, { repo: 'lib' })))).toEqual(['queued a0 #0', 'offered a0 → c1']);
    spec.when(claim('a0', 'c1', 2));
    spec.when(complete('a0', 'c1', true, undefined, 3));
    spec.when(disconnected('c1', 4));
    spec.when(connected('c1', 5, ['app']));
    const next = spec.when(submit('a1', 'A', 6, { repo: 'lib' }));
    expect(summary(next)).toEqual(['queued a1 #1', 'offered a1 → c2']);
    spec.when(claim('a1', 'c2', 7));
    spec.when(complete('a1', 'c2', true, undefined, 8));
    // Its last turn ran on c2, which has no app.
    expect(summary(spec.when(submit('a2', 'A', 9, { repo: 'app' })))).toEqual(['queued a2 #2', 'offered a2 → c1']);
  });

  it('given a full window, when a claim frees a place, then the oldest waiting lane the claimer has the repository of is pulled', () => {
    const spec = boardSpec(...online('c1', ['app']), ...online('c2', ['lib']), disconnected('c2', 1));
    for (let i = 0; i < WINDOW; i++) spec.when(submit(`f${i}`, `F${i}`, 1 + i, { repo: 'app' }));
    // c1's window is full: both wait, lib for a computer that has it, app for room.
    expect(said(spec.when(submit('lib1', 'L', 20, { repo: 'lib' }))![0]!)).toMatchObject({
      waits: 'offered to nobody yet: no computer online has repository lib',
    });
    expect(summary(spec.when(submit('app1', 'P', 21, { repo: 'app' })))).toEqual([`queued app1 #${WINDOW + 1}`]);
    expect(summary(spec.when(claim('f0', 'c1', 22)))).toEqual(['claimed f0 by c1', 'offered app1 → c1']);
  });

  it('given a computer that announced nothing (an older one), then it is offered runs for any repository, as before, and no name is refused', () => {
    const spec = boardSpec(...online('c1'));
    expect(summary(spec.when(submit('r1', 'A', 1, { repo: 'lib' })))).toEqual(['queued r1 #0', 'offered r1 → c1']);
    expect(summary(spec.when(submit('r2', 'B', 2, { repo: 'nope' })))).toEqual(['queued r2 #1', 'offered r2 → c1']);
    // Beside one that announced app, it may still have lib: lib is taken, and goes to it.
    spec.when(added('c2', 3));
    spec.when(connected('c2', 3, ['app']));
    expect(summary(spec.when(submit('r3', 'C', 4, { repo: 'lib' })))).toEqual(['queued r3 #2', 'offered r3 → c1']);
    // Once it comes back announcing what it has, the board knows.
    spec.when(disconnected('c1', 5));
    spec.when(connected('c1', 6, ['web']));
    expect(summary(spec.when(submit('r4', 'D', 7, { repo: 'lib' })))).toEqual(['refused submit 422 unknown_repo']);
  });
});

describe('board: a submission naming a repository none of its computers has', () => {
  it('given computers that announced app and lib, when a run names nope, then it is refused 422 naming it, the names they have and what to do, and nothing is queued', () => {
    const spec = boardSpec(...online('c1', ['app']), ...online('c2', ['lib', 'app']));
    const refused = spec.when(submit('r1', 'A', 1, { repo: 'nope' }));
    expect(summary(refused)).toEqual(['refused submit 422 unknown_repo']);
    expect(requestAnswer(refused!)).toEqual({
      status: 422,
      code: 'unknown_repo',
      reason:
        'no computer of this board has repository nope (its computers have app, lib): start a computer with --repo nope=PATH, or submit with one of those',
    });
    expect(spec.view('r1')).toBeNull();
    expect(spec.state.lanes).toEqual({});
  });

  it('given a computer with lib that is offline, then lib is still known: a run for it is taken and waits', () => {
    const spec = boardSpec(...online('c1', ['app']), ...online('c2', ['lib']), disconnected('c2', 1));
    expect(summary(spec.when(submit('r1', 'A', 2, { repo: 'lib' })))).toEqual(['queued r1 #0']);
  });

  it('given a computer whose latest announcement dropped lib, then lib is unknown; computers that announced none have none', () => {
    const spec = boardSpec(...online('c1', ['app', 'lib']), disconnected('c1', 1), connected('c1', 2, ['app']));
    expect(requestAnswer(spec.when(submit('r1', 'A', 3, { repo: 'lib' }))!)).toMatchObject({
      status: 422,
      reason: expect.stringContaining('repository lib (its computers have app)'),
    });
    const plain = boardSpec(...online('c1', []));
    expect(requestAnswer(plain.when(submit('r1', 'A', 1, { repo: 'lib' }))!)).toEqual({
      status: 422,
      code: 'unknown_repo',
      reason: 'no computer of this board has repository lib (its computers have none): start a computer with --repo lib=PATH',
    });
    // A run naming none goes to it as ever.
    expect(summary(plain.when(submit('r2', 'B', 2)))).toEqual(['queued r2 #0', 'offered r2 → c1']);
  });

  it('given a board that has heard no computer say yet, then any name is taken, and waits for a computer that has it', () => {
    const spec = boardSpec(added('c1'));
    const queued = spec.when(submit('r1', 'A', 1, { repo: 'lib' }));
    expect(summary(queued)).toEqual(['queued r1 #0']);
    // It connects without lib: the run stays where it is, and the next lib run is refused.
    expect(pushed(spec.when(connected('c1', 2, ['app'])), spec.state)).toEqual([]);
    expect(summary(spec.when(submit('r2', 'B', 3, { repo: 'lib' })))).toEqual(['refused submit 422 unknown_repo']);
  });

  it('given a keyed run taken, when it is submitted again with its key once its repository is unknown, then it is answered with the first run, as before', () => {
    const spec = boardSpec(added('c1'));
    const body = (key: string, repo: string) => ({ repo, idempotencyKey: key, prompt: `a turn in ${repo}` });
    spec.when(submit('r1', 'A', 1, body('k', 'lib')));
    spec.when(connected('c1', 2, ['app']));
    expect(summary(spec.when(submit('r2', 'A', 3, body('k', 'lib'))))).toEqual(['deduplicated r2 → r1']);
    // A refused submission keeps no key: the same key is taken once a computer has the repository.
    expect(summary(spec.when(submit('r3', 'B', 4, body('k2', 'web'))))).toEqual(['refused submit 422 unknown_repo']);
    spec.when(added('c2', 5));
    spec.when(connected('c2', 5, ['web']));
    expect(summary(spec.when(submit('r4', 'B', 6, body('k2', 'web'))))).toEqual(['queued r4 #1', 'offered r4 → c2']);
  });
});
