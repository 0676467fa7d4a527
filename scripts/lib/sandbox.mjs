// Where the scripts find the built sandbox: one place, so that moving the sandbox (a workspace
// package of its own) changes this line and nothing else.
const load = (module) => import(`@portfolio-mcp/sandbox/${module}`);

const [{ routeTable }, { ROUTES }, { EXCHANGE_OPERATION }] = await Promise.all([
  load("contract/readme"),
  load("routes"),
  load("tokens"),
]);

/** Every operation the sandbox serves, the token exchange first, as its route table lists them. */
export const servedOperations = () => [EXCHANGE_OPERATION, ...ROUTES];

export { routeTable };
