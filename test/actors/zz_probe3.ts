declare const MSG: unique symbol;
interface ActorRef<Msg> { readonly name: string; readonly [MSG]?: (msg: Msg) => void }
type Msg = { type: 'add'; n: number } | { type: 'get'; r: number };
declare const ref: ActorRef<Msg>;
declare function h1<T>(r: ActorRef<T>, f: () => T): void;
declare function h2<T>(r: ActorRef<T>, f: () => NoInfer<T>): void;
declare function h3<T>(r: ActorRef<T>, m: NoInfer<T>): void;
declare function h4<T>(r: ActorRef<T>, f: (x: number) => NoInfer<T>): void;
h1(ref, () => ({ type: 'get', r: 1 }));
h2(ref, () => ({ type: 'get', r: 1 }));
h3(ref, { type: 'get', r: 1 });
h4(ref, (x) => ({ type: 'get', r: x }));
h4(ref, (x: number) => ({ type: 'get', r: x }));
