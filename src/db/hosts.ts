import type pg from 'pg';
import { parse } from 'pg-connection-string';

export interface Host {
  host: string;
  port: number;
}

/** What a session must be for the gateway to use it (libpq's `target_session_attrs`, the values a writer can use). */
export type SessionAttrs = 'any' | 'read-write' | 'primary';

export interface DatabaseTarget {
  hosts: Host[];
  attrs: SessionAttrs;
  /** Everything else the URL says (user, database, TLS, options), host and port excepted. */
  config: pg.ClientConfig;
}

const default_port = 5432;
const session_attrs = new Set<SessionAttrs>(['any', 'read-write', 'primary']);

export class DatabaseUrlError extends Error {}

function hostOf(spec: string, defaultPort: number): Host {
  const m = /^(\[[^\]]+\]|[^:]*)(?::(\d*))?$/.exec(spec);
  if (!m) throw new DatabaseUrlError(`cannot read the host "${spec}"`);
  const host = decodeURIComponent(m[1]!.replace(/^\[|\]$/g, '')) || 'localhost';
  const port = m[2] ? Number(m[2]) : defaultPort;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new DatabaseUrlError(`the port of "${spec}" is not a port`);
  return { host, port };
}

/**
 * A `postgres://` URL as libpq reads it, several hosts included: `postgres://u@h1:5432,h2,[::1]:5433/db
 * ?target_session_attrs=read-write`. A host without a port takes 5432. The hosts are tried in the order
 * written; `target_session_attrs` says which session is wanted (read-write: `transaction_read_only`
 * off; primary: not in recovery). `pg` itself reads one host only: the rest of the URL is still its.
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const m = /^(postgres(?:ql)?:\/\/)([^/?#@]*@)?([^/?#]*)(.*)$/s.exec(url);
  if (!m) throw new DatabaseUrlError('must be postgres://…');
  const [, scheme, userinfo = '', hostspec = '', rest = ''] = m;
  const [path, query = ''] = rest.split(/\?(.*)/s, 2) as [string, string?];
  const params = new URLSearchParams(query);
  const attrs = (params.get('target_session_attrs') ?? 'any') as SessionAttrs;
  if (!session_attrs.has(attrs)) {
    throw new DatabaseUrlError(`target_session_attrs=${attrs} is not one the gateway can write through (read-write, primary or any)`);
  }
  params.delete('target_session_attrs');
  const specs = hostspec === '' ? [] : hostspec.split(',');
  const listed = specs.map((s) => hostOf(s, default_port));
  if (new Set(listed.map((h) => `${h.host}:${h.port}`)).size !== listed.length) throw new DatabaseUrlError('lists a host twice');
  const search = params.toString();
  let config: pg.ClientConfig;
  try {
    config = parse(`${scheme}${userinfo}${specs[0] ?? ''}${path}${search ? `?${search}` : ''}`) as pg.ClientConfig;
  } catch (error) {
    throw new DatabaseUrlError(`cannot be read: ${(error as Error).message}`);
  }
  // A socket directory or a lone host given as a parameter (`?host=/var/run/postgresql`) stays pg's.
  const hosts =
    listed.length > 0 ? listed : [{ host: (config.host as string | undefined) || 'localhost', port: Number(config.port) || default_port }];
  const { host: _host, port: _port, ...others } = config;
  return { hosts, attrs, config: others };
}
