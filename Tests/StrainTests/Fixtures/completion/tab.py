"""Types a command line and a TAB into an interactive shell on a pseudo-terminal, as a
person would, and prints what the shell then showed (escape sequences removed).

    python3 tab.py SHELL SCRIPT FOLDER LINE

SHELL is bash, zsh or fish; SCRIPT the completion script to source (zsh's, named
`_strain`, is found through `fpath` by compinit instead); FOLDER goes first on
PATH (it holds `strain`, which the scripts ask for custom completions); LINE the text
typed before the TAB. Each read waits until the shell has been quiet for a second, at
most 30 s in all; the shell is killed at the end.
"""
import os, pty, re, select, signal, sys, time

shell, script, folder, line = sys.argv[1:5]
pid, fd = pty.fork()
if pid == 0:
    os.environ['PATH'] = folder + ':' + os.environ.get('PATH', '')
    os.environ['TERM'] = 'dumb' if shell == 'bash' else 'xterm'
    os.environ['HOME'] = folder
    argv = {'bash': ['bash', '--norc', '--noprofile', '-i'], 'zsh': ['zsh', '-f', '-i'], 'fish': ['fish', '--no-config', '-i']}[shell]
    os.execvp(argv[0], argv)

deadline = time.time() + 30


def settle(quiet=1.0):
    """What the shell writes until it has been quiet for `quiet` seconds."""
    out, last = b'', time.time()
    while time.time() < deadline and time.time() - last < quiet:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out, last = out + chunk, time.time()
    return out


try:
    settle(1.5)
    if shell == 'zsh':
        os.write(fd, ('fpath=(' + os.path.dirname(script) + ' $fpath); autoload -U compinit; compinit -u\r').encode())
    else:
        os.write(fd, ('source ' + script + '\r').encode())
    settle()
    os.write(fd, line.encode() + b'\t')
    shown = settle(2.0)
    if shell == 'bash':  # bash lists the candidates at a second TAB
        os.write(fd, b'\t')
        shown += settle(2.0)
    text = shown.decode('utf-8', 'replace')
    print(re.sub(r'\x1b(\[[0-9;?]*[A-Za-z]|[()][0-9A-Za-z]|[=>])', '', text))
finally:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
