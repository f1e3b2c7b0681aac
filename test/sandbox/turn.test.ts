// The turn sandbox under real bubblewrap, as root (as CI runs): writes, protected paths, mount attacks,
// network, the approval socket, gate-sh's rules and config, signals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { spawn, spawnSync } from 'node:child_process';
import { box, BWRAP } from './helpers.js';
import { turnSandboxArgv } from '../../src/sandbox/bwrap-argv.js';
import { workspaceWrite } from '../../src/sandbox/policy.js';

const listen = (s: Server, at: string | number) => new Promise<void>((res) => s.listen(at as never, '127.0.0.1' as never, () => res()));
const listenPath = (s: Server, p: string) => new Promise<void>((res) => s.listen(p, () => res()));

test('workspace-write: writes inside roots work, outside fail with EROFS', (t) => {
  const b = box();
  t.after(b.cleanup);
  const other = join(b.dir, 'other');
  mkdirSync(other);
  // the temp folders live under /tmp: keep /tmp out so that `other` is outside every root
  const noTmp = workspaceWrite({ exclude_slash_tmp: true, exclude_tmpdir_env_var: true });
  const r = b.run(turnSandboxArgv(noTmp, b.ctx()), `echo in > ${b.ws}/f && echo ok1; echo x > ${other}/f; echo x > /etc/gate_test_$$`);
  assert.match(r.out, /ok1/);
  const tmp = b.run(turnSandboxArgv(workspaceWrite(), b.ctx()), `echo x > ${other}/f && echo ok2 && rm ${other}/f`);
  assert.match(tmp.out, /ok2/, '/tmp is a writable root by default');
  assert.equal(readFileSync(join(b.ws, 'f'), 'utf8'), 'in\n');
  assert.ok(!existsSync(join(other, 'f')));
  assert.match(r.err, new RegExp(`${other}/f: Read-only file system`));
  const ro = b.run(turnSandboxArgv({ type: 'read-only' }, b.ctx()), `echo x > ${b.ws}/g`);
  assert.notEqual(ro.status, 0);
  assert.match(ro.err, /Read-only file system/);
  const ex = b.run(turnSandboxArgv(noTmp, b.ctx({ env: { ...b.env, TMPDIR: other } })), `echo x > /tmp/gate_tmp_$$; echo x > ${other}/t`);
  assert.equal(ex.err.match(/Read-only file system/g)?.length, 2, ex.err);
  const td = b.run(
    turnSandboxArgv(workspaceWrite({ exclude_slash_tmp: true }), b.ctx({ env: { ...b.env, TMPDIR: other } })),
    `echo x > ${other}/t && echo tmpdir=ok`,
  );
  assert.match(td.out, /tmpdir=ok/, td.err);
});

test('.git stays read-only: directly, through a symlink, after umount and remount attempts; a missing .git is made as under bash', (t) => {
  const b = box();
  t.after(b.cleanup);
  symlinkSync(join(b.ws, '.git'), join(b.ws, 'gitlink'));
  const args = turnSandboxArgv(workspaceWrite(), b.ctx())!;
  const r = b.run(
    args,
    [
      'echo evil >> .git/config; echo "rc1=$?"',
      'echo evil >> gitlink/config; echo "rc2=$?"',
      'mkdir .git/hooks2; echo "rc3=$?"',
      `umount ${b.ws}/.git; echo "umount=$?"`,
      `mount -o remount,rw ${b.ws}/.git; echo "remount=$?"`,
      'mount -o remount,rw,bind /; echo "remount_root=$?"',
      'echo evil >> .git/config; echo "rc4=$?"',
      'echo x > /etc/gate_rw_test_$$; echo "etc=$?"',
      'rm -rf .git; mv .git moved; echo "rc5=$?"',
      'echo fine > work.txt; echo "ws=$?"',
    ].join('\n'),
  );
  for (const k of ['rc1', 'rc2', 'rc3', 'umount', 'remount', 'remount_root', 'rc4', 'etc', 'rc5'])
    assert.doesNotMatch(r.out, new RegExp(`${k}=0\\b`), `${k}: ${r.out}\n${r.err}`);
  assert.match(r.out, /ws=0/);
  assert.equal(readFileSync(join(b.ws, '.git', 'config'), 'utf8'), '[core]\n');
  assert.match(r.out, /umount=\d+/);

  // a workspace whose .git is a symlink to the real folder, and one without .git
  const real = join(b.dir, 'realgit');
  mkdirSync(join(b.dir, 'ws2'));
  mkdirSync(real);
  writeFileSync(join(real, 'config'), 'orig\n');
  symlinkSync(real, join(b.dir, 'ws2', '.git'));
  const ws2 = join(b.dir, 'ws2');
  const r2 = b.run(turnSandboxArgv(workspaceWrite({ writable_roots: [b.dir] }), b.ctx({ cwd: ws2 })), 'echo evil >> .git/config; echo "rc=$?"');
  assert.match(r2.out, /rc=1/, r2.err);
  assert.equal(readFileSync(join(real, 'config'), 'utf8'), 'orig\n');

  const ws3 = join(b.dir, 'ws3');
  mkdirSync(ws3);
  // no placeholder: nothing is left in the folder, and `git init` works (the repository is the agent's; an
  // escalated git never uses it: src/daemon/git-trust.ts)
  const r3 = b.run(turnSandboxArgv(workspaceWrite(), b.ctx({ cwd: ws3 })), 'ls -A; git init -q . 2>&1; echo "rc=$?"; echo ok > file && echo w=ok');
  assert.equal(r3.out, 'rc=0\nw=ok\n', r3.err);
  assert.ok(existsSync(join(ws3, '.git', 'HEAD')));
});

test('network off: a loopback server outside is unreachable; network on: reachable', async (t) => {
  const b = box();
  const srv = createServer((c) => c.end('hello\n'));
  await listen(srv, 0);
  t.after(() => (srv.close(), b.cleanup()));
  const port = (srv.address() as { port: number }).port;
  const script = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`;
  const off = await b.runAsync(turnSandboxArgv(workspaceWrite(), b.ctx()), script);
  assert.notEqual(off.status, 0);
  assert.match(off.err, /Connection refused|Network is unreachable/);
  const on = await b.runAsync(turnSandboxArgv(workspaceWrite({ network_access: true }), b.ctx()), script);
  assert.equal(on.out, 'hello\n', on.err);
  const outside = await b.runAsync(null, script);
  assert.equal(outside.out, 'hello\n');
});

test("the approval socket is unreachable inside; the request folder is reachable, and the run's own client folder alone writable", async (t) => {
  const b = box();
  const approval = createServer((c) => c.end('approved\n'));
  const request = createServer((c) => c.end('request\n'));
  await listenPath(approval, b.paths.approvalSock);
  await listenPath(request, b.paths.streamSock);
  t.after(() => (approval.close(), request.close(), b.cleanup()));
  const probe = (p: string) =>
    `${process.execPath} -e "require('net').connect(process.argv[1]).on('data',d=>process.stdout.write('${'$'}{p}:'+d)).on('error',e=>console.log(process.argv[1].split('/').pop()+':'+e.code))" ${p}`.replace(
      '${p}',
      '',
    );
  const script = [probe(b.paths.approvalSock), probe(b.paths.streamSock), `ls ${b.paths.sessionDir}`, `touch ${b.runDir}/reply && echo bound`, `touch ${b.paths.clientDir}/reply 2>&1`].join(
    '; ',
  );
  for (const args of [turnSandboxArgv(workspaceWrite(), b.ctx()), turnSandboxArgv({ type: 'read-only' }, b.ctx())]) {
    const r = await b.runAsync(args, script);
    assert.match(r.out, /approval\.sock:ENOENT/, r.out + r.err);
    assert.match(r.out, /request/);
    assert.match(r.out, /bound/);
    assert.match(r.out, /c\/reply': Read-only file system/, r.out);
    assert.doesNotMatch(r.out, /approved/);
  }
  const outside = await b.runAsync(null, probe(b.paths.approvalSock));
  assert.match(outside.out, /approved/, 'the probe works when not sandboxed');
});

test("gate-sh's rules and config cannot be edited, even inside the workspace; a missing CODEX_HOME cannot be planted", (t) => {
  const b = box();
  t.after(b.cleanup);
  const home = b.ws;
  const env = { ...b.env, HOME: home, GATE_HOME: join(home, '.gate-sh'), CODEX_HOME: join(home, '.codex') };
  mkdirSync(join(home, '.gate-sh', 'rules'), { recursive: true });
  writeFileSync(join(home, '.gate-sh', 'rules', 'default.rules'), '# mine\n');
  const r = b.run(turnSandboxArgv(workspaceWrite(), b.ctx({ ...b.ctx(), protectedExtra: [env.GATE_HOME, env.CODEX_HOME] })), [
    `echo 'prefix_rule(pattern=["bash"], decision="allow")' >> ${env.GATE_HOME}/rules/default.rules; echo "rules=$?"`,
    `echo 'approval_policy="never"' > ${env.GATE_HOME}/config.toml; echo "config=$?"`,
    `mkdir -p ${env.CODEX_HOME}/rules; echo "codex=$?"`,
  ].join('\n'));
  assert.match(r.out, /rules=1/);
  assert.match(r.out, /config=1/);
  assert.match(r.out, /codex=1/);
  assert.equal(readFileSync(join(home, '.gate-sh', 'rules', 'default.rules'), 'utf8'), '# mine\n');
  assert.ok(!existsSync(join(home, '.gate-sh', 'config.toml')));
});

test('signals: killing bwrap kills the sandboxed command', async (t) => {
  const b = box();
  t.after(b.cleanup);
  const marker = `${900 + Math.floor(Math.random() * 99)}.${process.pid}`;
  const p = spawn(BWRAP, [...turnSandboxArgv(workspaceWrite(), b.ctx())!, 'sleep', marker], { cwd: b.ws, env: b.env, stdio: 'ignore' });
  const alive = () => spawnSync('pgrep', ['-f', `^sleep ${marker}$`]).status === 0;
  for (let i = 0; i < 100 && !alive(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(alive(), 'the sandboxed sleep started');
  const exited = new Promise<number | null>((res) => p.on('exit', (_c, s) => res(s === 'SIGTERM' ? 143 : _c)));
  p.kill('SIGTERM');
  assert.equal(await exited, 143);
  for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(!alive(), 'the sandboxed sleep died with bwrap');
});
