import { expectTypeOf } from 'vitest';
declare const REPLY: unique symbol;
declare const MSG: unique symbol;
interface ReplyTo<R> { readonly [REPLY]?: (r: R) => void }
interface ActorRef<Msg> { readonly name: string; readonly [MSG]?: (msg: Msg) => void }
type ReplyOf<M> = M extends { readonly replyTo: ReplyTo<infer R> } ? R : unknown;
type Matching<Msg, M> = Msg extends unknown ? (M extends Msg ? Msg : never) : never;
declare function query<Msg, M extends Msg>(ref: ActorRef<Msg>, make: (replyTo: ReplyTo<any>) => M, t: number): Promise<ReplyOf<Matching<Msg, M>>>;
declare function queryA<Msg, Reply>(ref: ActorRef<Msg>, make: (replyTo: ReplyTo<Reply>) => NoInfer<Msg>, t: number): Promise<Reply>;
type Msg = { type: 'add'; n: number } | { type: 'get'; replyTo: ReplyTo<number> } | { type: 'name'; replyTo: ReplyTo<string> } | { type: 'x', replyTo: ReplyTo<string> ; n: number};
declare const ref: ActorRef<Msg>;
expectTypeOf(query(ref, (replyTo) => ({ type: 'get', replyTo }), 1)).toEqualTypeOf<Promise<number>>();
expectTypeOf(query(ref, (replyTo) => ({ type: 'name', replyTo }), 1)).toEqualTypeOf<Promise<string>>();
expectTypeOf(query(ref, (replyTo) => ({ type: 'x', replyTo, n: 1 }), 1)).toEqualTypeOf<Promise<string>>();
query(ref, (replyTo) => ({ type: 'nope', replyTo }), 1);
query(ref, (replyTo) => ({ type: 'get' }), 1);
expectTypeOf(queryA(ref, (replyTo) => ({ type: 'get', replyTo }), 1)).toEqualTypeOf<Promise<unknown>>();
expectTypeOf(queryA(ref, (replyTo: ReplyTo<number>) => ({ type: 'get', replyTo }), 1)).toEqualTypeOf<Promise<number>>();
queryA(ref, (replyTo: ReplyTo<number>) => ({ type: 'nope', replyTo }), 1);
