import { Problem } from "./problem.js";

/** A state machine as data: for each move, the states it may start from. */
export type Transitions<State extends string, Move extends string> = Record<Move, readonly State[]>;

/**
 * Refuses a move the machine does not allow from `from` with 409 `invalid_transition`, naming
 * the states it would be allowed from (spec part 3 names states but shows no transitions: the
 * tables are the sandbox's, listed in the README).
 */
export function assertTransition<State extends string, Move extends string>(
  machine: Transitions<State, Move>,
  move: Move,
  from: State,
  what: string,
): void {
  const allowed = machine[move];
  if (allowed.includes(from)) return;
  throw new Problem(
    409,
    allowed.length === 0
      ? `${what} is ${from}: ${move} is never allowed (it is only a starting state).`
      : `${what} is ${from}: ${move} is allowed only from ${allowed.join(", ")}.`,
    { reasonCode: "invalid_transition" },
  );
}

/**
 * For machines whose moves are named after the state they lead to: refuses `to` unless a chain
 * of allowed moves leads there from `from` (409 `invalid_transition`). An external
 * synchronisation reports where a record is now, possibly several moves later (spec part 3
 * shows no transitions: this rule is the sandbox's, in the README).
 */
export function assertReachable<State extends string>(
  machine: Transitions<State, State>,
  from: State,
  to: State,
  what: string,
): void {
  if (from === to) return;
  const seen = new Set<State>([from]);
  const queue: State[] = [from];
  for (let state = queue.shift(); state !== undefined; state = queue.shift()) {
    for (const [next, starts] of Object.entries(machine) as Array<[State, readonly State[]]>) {
      if (!starts.includes(state) || seen.has(next)) continue;
      if (next === to) return;
      seen.add(next);
      queue.push(next);
    }
  }
  throw new Problem(409, `${what} is ${from}: no sequence of allowed moves leads to ${to}.`, {
    reasonCode: "invalid_transition",
  });
}
