// server.json, the MCP Registry's description of this server (schema 2025-12-11): the MCP
// Bundle as a package, with the SHA-256 of the file `npm run pack:mcpb` wrote, and the remote
// a team deploys (Streamable HTTP at /mcp). Everything in it comes from package.json,
// manifest.json and the server's own variable descriptions; test/deploy/server-json.test.ts
// checks the committed file against this function and the schema.

export const SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
/** The registry name; the image's io.modelcontextprotocol.server.name label carries it too. */
export const SERVER_NAME = "io.github.portfolio-mcp/portfolio-mcp";
/** Where a release publishes the bundle: the registry's clients download it from here. */
export const RELEASES = "https://github.com/portfolio-mcp/portfolio-mcp/releases/download";

/**
 * @param {{ version: string }} pkg package.json
 * @param {any} manifest manifest.json
 * @param {string} sha256 the bundle file's SHA-256, hex
 * @param {Array<{ name: string, description: string }>} variables the server's variables
 */
export function serverJson(pkg, manifest, sha256, variables) {
  const described = new Map(variables.map((v) => [v.name, v.description]));
  const environmentVariables = Object.entries(manifest.server.mcp_config.env).map(
    ([name, value]) => {
      const key = /^\$\{user_config\.(\w+)\}$/.exec(value)?.[1];
      const input = manifest.user_config[key];
      if (!input) throw new Error(`manifest.json: ${name} is not set from a user_config entry`);
      const description = described.get(name);
      if (!description) throw new Error(`${name} is not a variable of the server`);
      return {
        name,
        description,
        isRequired: input.required === true,
        isSecret: input.sensitive === true,
        format:
          input.type === "file" ? "filepath" : input.type === "boolean" ? "boolean" : "string",
        ...(input.default !== "" && input.default !== undefined
          ? { default: String(input.default) }
          : {}),
      };
    },
  );
  return {
    $schema: SCHEMA,
    name: SERVER_NAME,
    title: manifest.display_name,
    description:
      "Portfolio data from an investment manager's Partner API; writes a person confirms.",
    version: pkg.version,
    packages: [
      {
        registryType: "mcpb",
        identifier: `${RELEASES}/v${pkg.version}/portfolio-mcp-${pkg.version}.mcpb`,
        version: pkg.version,
        fileSha256: sha256,
        transport: { type: "stdio" },
        environmentVariables,
      },
    ],
    remotes: [
      {
        type: "streamable-http",
        // The 2025-12-11 schema wants the URL to start with its scheme: the variable is the
        // rest of the origin.
        url: "https://{baseUrl}/mcp",
        variables: {
          baseUrl: {
            description:
              "Host of your team's deployment, without https:// (and its port or path prefix, if any), such as mcp.example.com",
            isRequired: true,
          },
        },
        headers: [
          {
            name: "Authorization",
            description:
              "Bearer token the deployment gave you (its PORTFOLIO_MCP_TOKEN or your entry in its clients file); not needed where it signs you in with OAuth",
            isRequired: false,
            isSecret: true,
            value: "Bearer {token}",
            variables: { token: { description: "Your token", isRequired: true, isSecret: true } },
          },
        ],
      },
    ],
  };
}
