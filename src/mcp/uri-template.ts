/**
 * URI templates of the form `scheme://path/{var}/more{?a,b}`: path variables are whole
 * segments; query variables are all optional and may come in any order (RFC 6570). The SDK's
 * matcher requires every query variable in order (typescript-sdk#1079), hence this one.
 */
export interface CompiledTemplate {
  template: string;
  pathVariables: string[];
  queryVariables: string[];
  match(uri: string): Record<string, string> | null;
}

export function compileTemplate(template: string): CompiledTemplate {
  const queryAt = template.indexOf("{?");
  const pathPart = queryAt === -1 ? template : template.slice(0, queryAt);
  const queryVariables =
    queryAt === -1
      ? []
      : template
          .slice(queryAt + 2, template.indexOf("}", queryAt))
          .split(",")
          .map((v) => v.trim());
  const pathVariables: string[] = [];
  const pattern = pathPart.replace(
    /\{([a-z_]+)\}|[.*+?^${}()|[\]\\]/g,
    (token, name: string | undefined) => {
      if (name) {
        pathVariables.push(name);
        return "([^/?#]+)";
      }
      return `\\${token}`;
    },
  );
  const regex = new RegExp(`^${pattern}(?:\\?([^#]*))?$`);
  return {
    template,
    pathVariables,
    queryVariables,
    match(uri) {
      const found = regex.exec(uri);
      if (!found) return null;
      const variables: Record<string, string> = {};
      for (const [i, name] of pathVariables.entries()) {
        const value = safeDecode(found[i + 1] ?? "");
        if (value === null) return null;
        variables[name] = value;
      }
      const query = found[pathVariables.length + 1];
      if (query !== undefined) {
        if (queryVariables.length === 0 && query !== "") return null;
        for (const [name, value] of new URLSearchParams(query)) {
          if (!queryVariables.includes(name)) return null; // an unknown parameter: not this resource
          variables[name] = value;
        }
      }
      return variables;
    },
  };
}

function safeDecode(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}
