#!/usr/bin/python3
"""Plots a Crema (or Caffe) training log: training loss, and each test net
output (accuracy, loss), against the iteration, into one PNG.

    plot_training_log.py LOGFILE OUTPUT.png

Needs matplotlib (Debian: python3-matplotlib, installed by
scripts/install_deps.sh; run with /usr/bin/python3).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parse_log  # noqa: E402


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
    figure, loss_axes = plt.subplots(figsize=(8, 4.5))
    if train:
        loss_axes.plot([r['NumIters'] for r in train], [r.get('loss') for r in train],
                       color='tab:blue', linewidth=1, label='train loss')
    test_loss = [r for r in test if 'loss' in r]
    if test_loss:
        loss_axes.plot([r['NumIters'] for r in test_loss], [r['loss'] for r in test_loss],
                       color='tab:orange', marker='.', label='test loss')
    loss_axes.set_xlabel('iteration')
    loss_axes.set_ylabel('loss')
    lines, labels = loss_axes.get_legend_handles_labels()
    accuracy = [r for r in test if 'accuracy' in r]
    if accuracy:
        accuracy_axes = loss_axes.twinx()
        accuracy_axes.plot([r['NumIters'] for r in accuracy], [r['accuracy'] for r in accuracy],
                           color='tab:green', marker='o', markersize=3, label='test accuracy')
        accuracy_axes.set_ylabel('accuracy')
        accuracy_axes.set_ylim(0, 1)
        more_lines, more_labels = accuracy_axes.get_legend_handles_labels()
        lines += more_lines
        labels += more_labels
        loss_axes.set_title('%s: final test accuracy %.4f'
                            % (os.path.basename(argv[1]), accuracy[-1]['accuracy']))
    loss_axes.legend(lines, labels, loc='center right')
    loss_axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(argv[2], dpi=100)
    print('wrote %s' % argv[2])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
