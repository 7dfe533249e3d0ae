import type { Db } from '../../src/db/db.ts';

/** The database, each statement's text recorded as it leaves (a group writer of its own: writers are per database object). */
export function countingDb(db: Db, statements: string[]): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver);
      return (text: string, params?: unknown[]) => {
        statements.push(text);
        return target.query(text, params);
      };
    },
  });
}
