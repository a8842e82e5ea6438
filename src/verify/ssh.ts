import { readFile } from 'node:fs/promises';
import { NodeSSH } from 'node-ssh';
import type { Remote } from './remote';

export interface SshTarget {
  host: string;
  port: number;
  username: string;
  /** Path of the private key file. */
  privateKeyPath: string;
  /** Connection timeout in milliseconds. */
  readyTimeout?: number;
}

export interface SshRemote extends Remote {
  close(): void;
}

/**
 * Opens an SSH session with key authentication. The host key is not pinned: the checks only read state from the host
 * and send nothing secret, and a fresh EC2 host has no known key yet.
 */
export async function connectSsh(target: SshTarget): Promise<SshRemote> {
  let privateKey: string;
  try {
    privateKey = await readFile(target.privateKeyPath, 'utf8');
  } catch (err) {
    throw new Error(`cannot read SSH key ${target.privateKeyPath}: ${(err as Error).message}`);
  }
  const ssh = new NodeSSH();
  try {
    await ssh.connect({
      host: target.host,
      port: target.port,
      username: target.username,
      privateKey,
      readyTimeout: target.readyTimeout ?? 20_000,
      tryKeyboard: false,
    });
  } catch (err) {
    ssh.dispose();
    throw new Error(`cannot connect to ${target.username}@${target.host}:${target.port} over SSH: ${(err as Error).message}`);
  }
  return {
    async exec(command) {
      const result = await ssh.execCommand(command, { noTrim: true });
      return { stdout: result.stdout, stderr: result.stderr, code: result.code };
    },
    close() {
      ssh.dispose();
    },
  };
}
