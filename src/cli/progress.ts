// Build progress: a bar with counts and rate on a terminal, nothing when output goes to a file or pipe.
import type { WriteStream } from "node:tty";

export interface Progress {
  update: (phase: string, done: number, total: number) => void;
  done: () => void;
}

export function createProgress(stream: NodeJS.WriteStream | WriteStream): Progress {
  if (!stream.isTTY) return { update: () => {}, done: () => {} };
  let last = 0;
  let phaseStart = Date.now();
  let phase = "";
  let drawn = false;
  return {
    update(p, done, total) {
      const now = Date.now();
      if (p !== phase) {
        phase = p;
        phaseStart = now;
      } else if (now - last < 100 && done < total) return;
      last = now;
      const width = 30;
      const filled = total > 0 ? Math.round((done / total) * width) : 0;
      const rate = done / Math.max(0.001, (now - phaseStart) / 1000);
      stream.write(
        `\r${phase.padEnd(8)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} ${Math.round(rate)}/s   `,
      );
      drawn = true;
    },
    done() {
      if (drawn) stream.write("\r\x1b[K");
    },
  };
}
