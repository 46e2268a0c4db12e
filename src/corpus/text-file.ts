import { existsSync, readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { InputError } from '../errors.js';
import { regularFile } from './regular-file.js';
import { decodeWhole } from './utf8.js';

/** Read a file as text; `.gz` files are decompressed. A missing file or a directory is an input error naming it. */
export function readTextFile(path: string): string {
  if (!existsSync(path)) throw new InputError(`${path}: no such file`);
  regularFile(path, statSync(path));
  const bytes = readFileSync(path);
  return decodeWhole(path, path.endsWith('.gz') ? gunzipSync(bytes) : bytes);
}
