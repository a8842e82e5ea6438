/**
 * A step executor for these tests until the runtime's is merged: the same overlay of layers, entered with chroot
 * inside private mount and PID namespaces (mounts vanish with the namespace, a timeout kills everything in it).
 */
import { spawn } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { StepExecutor, StepRun } from '../../../../src/runtime/types';
import { shellQuote } from '../../../../src/platform/templates/shell';

export function chrootExecutor(): StepExecutor {
  return {
    async run(step: StepRun): Promise<number> {
      const work = `${step.layerDir}.work`;
      const mnt = `${step.layerDir}.mnt`;
      await mkdir(work, { recursive: true });
      await mkdir(mnt, { recursive: true });
      const q = shellQuote;
      const binds = (step.binds ?? []).map((b) => `mkdir -p ${q(mnt + b.target)} && mount --bind -o ro ${q(b.source)} ${q(mnt + b.target)}`);
      const env = Object.entries(step.env).map(([k, v]) => q(`${k}=${v}`)).join(' ');
      const inner = `cd ${q(step.workdir)} 2>/dev/null || cd /; exec ${step.argv.map(q).join(' ')}`;
      const script = [
        'set -e',
        `mount -t overlay overlay -o ${q(`lowerdir=${step.layers.join(':')},upperdir=${step.layerDir},workdir=${work}`)} ${q(mnt)}`,
        `mount -t proc proc ${q(mnt + '/proc')}`,
        `mount --rbind /dev ${q(mnt + '/dev')}`,
        ...(step.network === 'host' ? [`mount --bind -o ro /etc/resolv.conf ${q(mnt + '/etc/resolv.conf')}`] : []),
        ...binds,
        `exec chroot ${q(mnt)} /usr/sbin/runuser -u ${q(step.user)} -- /usr/bin/env -i ${env} /bin/sh -c ${q(inner)}`,
      ].join('\n');
      const args = ['--mount', '--propagation', 'private', '--pid', '--fork', '--kill-child', ...(step.network === 'none' ? ['--net'] : []), 'sh', '-c', script];
      const child = spawn('unshare', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      createInterface({ input: child.stdout }).on('line', (l) => step.onLine('stdout', l));
      createInterface({ input: child.stderr }).on('line', (l) => step.onLine('stderr', l));
      const timer = setTimeout(() => child.kill('SIGKILL'), step.timeoutMs);
      try {
        return await new Promise<number>((resolve, reject) => {
          child.once('error', reject);
          child.once('close', (code, signal) => resolve(code ?? (signal ? 137 : 1)));
        });
      } finally {
        clearTimeout(timer);
        await rm(work, { recursive: true, force: true });
        await rm(mnt, { recursive: true, force: true });
      }
    },
  };
}
