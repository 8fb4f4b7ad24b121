"""What the plot scripts beside this file share (they import it from their own folder)."""
import os


def save_figure(fig, path, **savefig_args):
    """Writes a matplotlib figure to path atomically: a temporary file beside it, then a
    rename, so a reader (or an interrupted run) never sees half a picture. savefig_args
    go to fig.savefig; an OSError is the caller's to report."""
    root, ext = os.path.splitext(path)
    tmp = "%s.tmp.%d%s" % (root, os.getpid(), ext)
    fig.savefig(tmp, **savefig_args)
    os.replace(tmp, path)
