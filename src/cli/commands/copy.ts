import type { Command } from 'commander';
import type { Run } from './memory.js';

export function registerCopyCommand(_program: Command, _run: Run): void {}
