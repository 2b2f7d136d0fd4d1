/** Small helpers for reading the loosely typed tokenizer.json. */
import { CairnError } from '../../errors.js';

export type Json = Record<string, unknown>;

export function unsupported(what: string): CairnError {
  return new CairnError('INVALID_INPUT', `tokenizer.json: unsupported ${what}`);
}

export function badConfig(what: string): CairnError {
  return new CairnError('INVALID_INPUT', `tokenizer.json: ${what}`);
}

export function asObject(value: unknown, where: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badConfig(`${where} is not an object`);
  return value as Json;
}

export function bool(config: Json, key: string, fallback: boolean): boolean {
  const value = config[key];
  return typeof value === 'boolean' ? value : fallback;
}

export function str(config: Json, key: string, fallback: string): string {
  const value = config[key];
  return typeof value === 'string' ? value : fallback;
}

/** A `{ String: "..." }` or `{ Regex: "..." }` pattern as a global RegExp. */
export function pattern(value: unknown, where: string): RegExp {
  const config = asObject(value, where);
  if (typeof config['String'] === 'string') {
    return new RegExp(config['String'].replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gu');
  }
  if (typeof config['Regex'] === 'string') {
    try {
      return new RegExp(config['Regex'], 'gu');
    } catch (cause) {
      throw new CairnError('INVALID_INPUT', `tokenizer.json: ${where} regex ${config['Regex']} is not supported`, { cause });
    }
  }
  throw badConfig(`${where} has neither String nor Regex`);
}
