#!/usr/bin/python3
"""Plots a Crema (or Caffe) training log against the iteration, into one PNG:
the training loss ('loss', else the first output named like a loss, such as
SSD's mbox_loss), the test loss, and the test score on a [0, 1] axis
('accuracy', else the first output that is not a loss, such as SSD's
detection_eval, its mAP), and below them the learning rate the log shows
(`Iteration N, lr = X` lines, one per display), so a schedule's warm-up
and restarts can be seen against the loss.

    plot_training_log.py LOGFILE OUTPUT.png

Needs matplotlib (Debian: python3-matplotlib, installed by
scripts/install_deps.sh; run with /usr/bin/python3).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parse_log  # noqa: E402


COLUMNS = ('NumIters', 'Seconds', 'LearningRate')


def outputs(rows):
    """The output names the rows hold, in first-seen order."""
    names = []
    for row in rows:
        names += [key for key in row if key not in COLUMNS and key not in names]
    return names


def loss_key(rows):
    """The output to plot as the loss: 'loss', else the first whose name has
    'loss' in it (mbox_loss), else None."""
    names = outputs(rows)
    if 'loss' in names:
        return 'loss'
    return next((name for name in names if 'loss' in name), None)


def score_key(rows):
    """The output to plot on the [0, 1] axis: 'accuracy', else the first
    other output that is not a loss (detection_eval: mAP), else None."""
    names = outputs(rows)
    if 'accuracy' in names:
        return 'accuracy'
    return next((name for name in names if 'loss' not in name), None)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 1
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write('plot_training_log.py: matplotlib is missing '
                         '(apt-get install python3-matplotlib; run with /usr/bin/python3)\n')
        return 1
    if not os.path.isfile(argv[1]):
        sys.stderr.write('plot_training_log.py: %s: no such file\n' % argv[1])
        return 1
    train, test = parse_log.parse(argv[1])
    rates = [(r['NumIters'], r['LearningRate']) for r in train
             if r['LearningRate'] == r['LearningRate']]  # not NaN: the log gave one
    if rates:
        figure, (loss_axes, lr_axes) = plt.subplots(
            2, 1, sharex=True, figsize=(8, 6), gridspec_kw={'height_ratios': [3, 1]})
        lr_axes.plot([i for i, _ in rates], [lr for _, lr in rates], color='tab:purple',
                     linewidth=1)
        lr_axes.set_ylabel('learning rate')
        lr_axes.set_xlabel('iteration')
        lr_axes.grid(alpha=0.3)
    else:
        figure, loss_axes = plt.subplots(figsize=(8, 4.5))
    train_loss = loss_key(train)
    if train_loss:
        loss_axes.plot([r['NumIters'] for r in train], [r.get(train_loss) for r in train],
                       color='tab:blue', linewidth=1, label='train %s' % train_loss)
    test_loss = loss_key(test)
    if test_loss:
        rows = [r for r in test if test_loss in r]
        loss_axes.plot([r['NumIters'] for r in rows], [r[test_loss] for r in rows],
                       color='tab:orange', marker='.', label='test %s' % test_loss)
    if not rates:
        loss_axes.set_xlabel('iteration')
    loss_axes.set_ylabel('loss')
    lines, labels = loss_axes.get_legend_handles_labels()
    score = score_key(test)
    if score:
        rows = [r for r in test if score in r]
        name = score + (' (mAP)' if score == 'detection_eval' else '')
        score_axes = loss_axes.twinx()
        score_axes.plot([r['NumIters'] for r in rows], [r[score] for r in rows],
                        color='tab:green', marker='o', markersize=3, label='test %s' % name)
        score_axes.set_ylabel(name)
        score_axes.set_ylim(0, 1)
        more_lines, more_labels = score_axes.get_legend_handles_labels()
        lines += more_lines
        labels += more_labels
        loss_axes.set_title('%s: final test %s %.4f'
                            % (os.path.basename(argv[1]), name, rows[-1][score]))
    loss_axes.legend(lines, labels, loc='center right')
    loss_axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(argv[2], dpi=100)
    print('wrote %s' % argv[2])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
