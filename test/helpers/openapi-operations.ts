/**
 * Finding the operation of an OpenAPI file that a request is for (method + path relative to the
 * API root): shared by the provider conformance harnesses (API Pix, Adyen Checkout).
 */

export const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

interface NamedParameter {
  name: string;
  in: string;
}
interface OperationLike<P extends NamedParameter> {
  parameters?: P[];
  security?: Record<string, string[]>[];
}
type PathItemLike<O, P> = Record<string, O> & { parameters?: P[] };

export interface FoundOperation<O, P> {
  /** "PUT /cob/{txid}", for messages. */
  name: string;
  operation: O;
  /** Path-level parameters, overridden by the operation's own of the same name and place. */
  parameters: P[];
  pathValues: Record<string, string>;
  security: Record<string, string[]>[];
}

interface Route {
  template: string;
  regex: RegExp;
  names: string[];
  literalLength: number;
}

function compile(template: string): Route {
  const names: string[] = [];
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      if (!part.startsWith('{')) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(part.slice(1, -1));
      return '([^/]+)';
    })
    .join('');
  return { template, regex: new RegExp(`^${source}$`), names, literalLength: template.replace(/\{[^}]+\}/g, '').length };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The finder over `paths` (those `servedHere` keeps): for a method and a path, the operation, or why
 * there is none, worded with `fileName` ("the file", "the Checkout file").
 */
export function operationFinder<P extends NamedParameter, O extends OperationLike<P>>(
  document: { paths?: Record<string, PathItemLike<O, P>>; security?: Record<string, string[]>[] },
  fileName: string,
  servedHere: (item: PathItemLike<O, P>) => boolean = () => true,
): (method: string, path: string) => FoundOperation<O, P> | string {
  const paths = document.paths ?? {};
  const routes = Object.keys(paths)
    .filter((template) => servedHere(paths[template]!))
    .map(compile);
  return (method, path) => {
    const verb = method.toLowerCase();
    // A concrete path beats a templated one (OpenAPI): /cob before /{pixUrlAccessToken}.
    const route = routes.filter((r) => r.regex.test(path)).sort((a, b) => b.literalLength - a.literalLength)[0];
    if (!route) return `no path of ${fileName} matches ${path}`;
    const item = paths[route.template]!;
    const operation = METHODS.includes(verb) ? item[verb] : undefined;
    if (!operation) {
      const known = METHODS.filter((m) => item[m]).map((m) => m.toUpperCase());
      return `${method.toUpperCase()} ${route.template}: no such operation in the file (that path has ${known.join(', ')})`;
    }
    const own = operation.parameters ?? [];
    const inherited = (item.parameters ?? []).filter((p) => !own.some((o) => o.name === p.name && o.in === p.in));
    const values = route.regex.exec(path)!.slice(1);
    const pathValues = Object.fromEntries(route.names.map((n, i) => [n, safeDecode(values[i]!)]));
    const security = operation.security ?? document.security ?? [];
    return { name: `${method.toUpperCase()} ${route.template}`, operation, parameters: [...inherited, ...own], pathValues, security };
  };
}
