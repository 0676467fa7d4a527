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
    `${what} is ${from}: ${move} is allowed only from ${allowed.join(", ")}.`,
    { reasonCode: "invalid_transition" },
  );
}
