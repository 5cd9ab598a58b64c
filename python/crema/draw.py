"""Draw a net as a graph: pycaffe's ``caffe.draw`` and Caffe's ``draw_net.py``.

Layers are boxes labelled with their name, type and key parameters; blobs
are octagons; an edge runs from each bottom blob to the layer and from the
layer to each top blob, so an in-place layer (top == bottom) gets an edge
back to the blob it read. The graph is written in Graphviz's DOT language
(:func:`to_dot`) and rendered by Graphviz's ``dot`` program.

From the command line, as Caffe's ``python/draw_net.py``::

    python3 -m crema.draw NET.prototxt OUT.png [--rankdir LR] [--phase ALL]
                                               [--display_lrm]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

from google.protobuf import text_format

from .proto import crema_pb2

__all__ = ['draw_net', 'draw_net_to_file', 'to_dot', 'get_layer_label',
           'get_edge_label', 'choose_color_by_layertype', 'get_layer_lr_mult',
           'get_pooling_types_dict', 'main']

# pycaffe's styles (Graphviz node attributes).
LAYER_STYLE_DEFAULT = {'shape': 'record', 'fillcolor': '#6495ED',
                       'style': 'filled'}
NEURON_LAYER_STYLE = {'shape': 'record', 'fillcolor': '#90EE90',
                      'style': 'filled'}
BLOB_STYLE = {'shape': 'octagon', 'fillcolor': '#E0E0E0', 'style': 'filled'}

RANKDIRS = ('LR', 'TB', 'BT', 'RL')

# Layer types with learnable blobs, whose learning-rate multipliers default
# to 1 when the layer has no ``param`` entries.
_LEARNABLE_TYPES = ('Convolution', 'Deconvolution', 'InnerProduct', 'Embed',
                    'Scale', 'Bias', 'PReLU', 'LSTM', 'RNN', 'Parameter')


def get_pooling_types_dict():
    """Return ``{enum number: name}`` of PoolingParameter.PoolMethod."""
    return {number: name for name, number
            in crema_pb2.PoolingParameter.PoolMethod.items()}


def get_edge_label(layer):
    """Return the label of the edges from ``layer`` to its tops.

    As pycaffe: the batch size for Data layers, num_output for
    (de)convolution and inner product layers, else ``'""'`` (no label).
    """
    if layer.type == 'Data':
        return 'Batch ' + str(layer.data_param.batch_size)
    if layer.type in ('Convolution', 'Deconvolution'):
        return str(layer.convolution_param.num_output)
    if layer.type == 'InnerProduct':
        return str(layer.inner_product_param.num_output)
    return '""'


def get_layer_lr_mult(layer):
    """Return ``[(lr_mult, decay_mult), ...]``, one pair per learnable blob.

    Taken from the layer's ``param`` entries; a learnable layer without them
    gets the schema defaults ``[(1, 1)]``; any other layer ``[]``.
    """
    if layer.param:
        return [(p.lr_mult, p.decay_mult) for p in layer.param]
    if layer.type in _LEARNABLE_TYPES:
        return [(1.0, 1.0)]
    return []


def _dims(repeated, height, width, default):
    """Format a size given as repeated values or as _h/_w fields ("3x5")."""
    if height or width:
        return '%dx%d' % (height, width)
    if len(repeated) == 0:
        return str(default)
    return 'x'.join(str(v) for v in repeated)


def _convolution_descriptors(conv):
    kernel = _dims(conv.kernel_size, conv.kernel_h, conv.kernel_w, 1)
    stride = _dims(conv.stride, conv.stride_h, conv.stride_w, 1)
    pad = _dims(conv.pad, conv.pad_h, conv.pad_w, 0)
    return ['kernel size: ' + kernel, 'stride: ' + stride, 'pad: ' + pad,
            'num output: %d' % conv.num_output]


def _pooling_descriptors(pool):
    if pool.global_pooling:
        return ['global pooling']
    kernel = _dims([pool.kernel_size] if pool.HasField('kernel_size') else [],
                   pool.kernel_h, pool.kernel_w, 0)
    stride = _dims([pool.stride], pool.stride_h, pool.stride_w, 1)
    pad = _dims([pool.pad], pool.pad_h, pool.pad_w, 0)
    return ['kernel size: ' + kernel, 'stride: ' + stride, 'pad: ' + pad]


def _lrm_descriptors(layer):
    mults = get_layer_lr_mult(layer)
    if not mults:
        return []
    return ['lr mult: ' + ', '.join('%g' % lr for lr, _ in mults),
            'decay mult: ' + ', '.join('%g' % d for _, d in mults)]


def _escape_label_text(text):
    # Record-shaped nodes give {}|<> a meaning; quotes and backslashes end or
    # escape the DOT string itself.
    return re.sub(r'([\\"{}|<>])', r'\\\1', text)


def get_layer_label(layer, rankdir, display_lrm=False):
    """Return the DOT label (a quoted string) of ``layer``'s node.

    Name and ``(type)``; kernel size, stride and pad for (de)convolution
    and pooling layers; num_output for (de)convolution and inner product
    layers; with ``display_lrm`` the lr_mult and decay_mult of each
    learnable blob. Parts are separated by newlines, or by spaces in the
    vertical layouts TB and BT (where width is free), as pycaffe does.
    """
    separator = ' ' if rankdir in ('TB', 'BT') else '\\n'
    parts = [layer.name]
    if layer.type == 'Pooling':
        pool_name = get_pooling_types_dict().get(layer.pooling_param.pool, '?')
        parts.append('(%s %s)' % (pool_name, layer.type))
        parts.extend(_pooling_descriptors(layer.pooling_param))
    else:
        parts.append('(%s)' % layer.type)
    if layer.type in ('Convolution', 'Deconvolution'):
        parts.extend(_convolution_descriptors(layer.convolution_param))
    elif layer.type == 'InnerProduct':
        parts.append('num output: %d' % layer.inner_product_param.num_output)
    if display_lrm:
        parts.extend(_lrm_descriptors(layer))
    return '"%s"' % separator.join(_escape_label_text(p) for p in parts)


def choose_color_by_layertype(layertype):
    """Return the fill colour of a layer node: one per family, as pycaffe."""
    if layertype in ('Convolution', 'Deconvolution'):
        return '#FF5050'
    if layertype == 'Pooling':
        return '#FF9900'
    if layertype == 'InnerProduct':
        return '#CC33FF'
    return '#6495ED'


def _rule_matches(rule, phase):
    # A rule without a phase (stages or levels only) does not depend on it;
    # stages and levels are ignored since drawing has no net state.
    return not rule.HasField('phase') or rule.phase == phase


def _layer_in_phase(layer, phase):
    """Whether ``layer`` is part of the net in ``phase`` (None: always)."""
    if phase is None:
        return True
    if layer.include and layer.exclude:
        raise ValueError('layer %s has both include and exclude specified'
                         % layer.name)
    if layer.include:
        return any(_rule_matches(rule, phase) for rule in layer.include)
    return not any(_rule_matches(rule, phase) for rule in layer.exclude)


def _dot_id(text):
    """Quote ``text`` as a DOT string."""
    return '"%s"' % text.replace('\\', '\\\\').replace('"', '\\"')


def _dot_label(text):
    # The label helpers return DOT strings already quoted, as pycaffe's do.
    if len(text) >= 2 and text.startswith('"') and text.endswith('"'):
        return text
    return _dot_id(text)


def _dot_attrs(attrs):
    quoted = []
    for key, value in attrs.items():
        quote = _dot_label if key == 'label' else _dot_id
        quoted.append('%s=%s' % (key, quote(str(value))))
    return ', '.join(quoted)


def _is_in_place(layer):
    return (len(layer.bottom) == 1 and len(layer.top) == 1
            and layer.bottom[0] == layer.top[0])


def _layer_attrs(layer, rankdir, display_lrm):
    style = dict(NEURON_LAYER_STYLE if _is_in_place(layer)
                 else LAYER_STYLE_DEFAULT)
    if not _is_in_place(layer):
        style['fillcolor'] = choose_color_by_layertype(layer.type)
    style['label'] = get_layer_label(layer, rankdir, display_lrm)
    return style


def _blob_attrs(blob):
    return dict(BLOB_STYLE, label=_dot_id(blob))


def _normalize_phase(phase):
    if isinstance(phase, str):
        return crema_pb2.Phase.Value(phase)
    return phase


def _graph_parts(net, rankdir, phase, display_lrm, label_edges):
    """Return ``(nodes, edges)``: ``{id: attrs}`` and ``[(src, dst, label)]``.

    A layer's node id is ``<name>_<type>`` and a blob's ``<blob>_blob``, as
    pycaffe; layers sharing name and type (a net's TRAIN and TEST data
    layers) therefore share one node, as in Caffe's drawings.
    """
    nodes, edges = {}, []
    for layer in net.layer:
        if not _layer_in_phase(layer, phase):
            continue
        layer_id = '%s_%s' % (layer.name, layer.type)
        nodes[layer_id] = _layer_attrs(layer, rankdir, display_lrm)
        for blob in layer.bottom:
            nodes.setdefault(blob + '_blob', _blob_attrs(blob))
            edges.append((blob + '_blob', layer_id, '""'))
        top_label = get_edge_label(layer) if label_edges else '""'
        for blob in layer.top:
            nodes.setdefault(blob + '_blob', _blob_attrs(blob))
            edges.append((layer_id, blob + '_blob', top_label))
    return nodes, edges


def to_dot(caffe_net, rankdir='LR', phase=None, display_lrm=False,
           label_edges=True):
    """Return the Graphviz DOT text of the NetParameter ``caffe_net``.

    ``rankdir`` is the layout direction (LR, TB, BT or RL); ``phase``
    (crema_pb2.TRAIN, crema_pb2.TEST or None for all layers) keeps only the
    layers that the phase's include/exclude rules admit; ``display_lrm``
    adds learning-rate and decay multipliers to the labels.
    """
    if rankdir not in RANKDIRS:
        raise ValueError('rankdir must be one of %s, not %r'
                         % (', '.join(RANKDIRS), rankdir))
    if len(caffe_net.layers):
        raise ValueError("the net uses the deprecated V1 'layers' format; "
                         'convert it with upgrade_net_proto_text first')
    nodes, edges = _graph_parts(caffe_net, rankdir, _normalize_phase(phase),
                                display_lrm, label_edges)
    lines = ['digraph %s {' % _dot_id(caffe_net.name or 'Net'),
             '  rankdir=%s;' % rankdir]
    for node_id, attrs in nodes.items():
        lines.append('  %s [%s];' % (_dot_id(node_id), _dot_attrs(attrs)))
    for src, dst, label in edges:
        lines.append('  %s -> %s [label=%s];'
                     % (_dot_id(src), _dot_id(dst), _dot_label(label)))
    lines.append('}')
    return '\n'.join(lines) + '\n'


def _dot_program():
    path = shutil.which('dot')
    if path is None:
        raise RuntimeError("Graphviz's 'dot' program was not found on PATH; "
                           'install graphviz (e.g. apt-get install graphviz) '
                           'to draw nets')
    return path


def render_dot(dot_text, ext='png'):
    """Render DOT text with Graphviz's ``dot -T<ext>`` and return the bytes."""
    result = subprocess.run([_dot_program(), '-T' + ext],
                            input=dot_text.encode('utf-8'),
                            capture_output=True, check=False)
    if result.returncode != 0:
        message = result.stderr.decode('utf-8', 'replace').strip()
        raise RuntimeError('dot -T%s failed: %s' % (ext, message))
    return result.stdout


def draw_net(caffe_net, rankdir, ext='png', phase=None, display_lrm=False):
    """Draw the NetParameter ``caffe_net`` and return the image bytes.

    ``ext`` is any Graphviz output format (png, svg, pdf, dot...); the other
    arguments are those of :func:`to_dot`.
    """
    return render_dot(to_dot(caffe_net, rankdir, phase, display_lrm), ext)


def _image_format(filename):
    ext = os.path.splitext(filename)[1][1:]
    if not ext:
        raise ValueError('cannot tell the image format of %r: give the file '
                         'an extension such as .png or .svg' % filename)
    return ext


def draw_net_to_file(caffe_net, filename, rankdir='LR', phase=None,
                     display_lrm=False):
    """Draw ``caffe_net`` into ``filename``, in the format of its extension."""
    image = draw_net(caffe_net, rankdir, _image_format(filename), phase,
                     display_lrm)
    _write_file(filename, image)


def _write_file(filename, data):
    """Write by Crema's safe-write rule: a failure leaves the file as it was."""
    from ._crema import _write_file as write
    write(filename, data)


# ---------------------------------------------------------------------------
# Command line


class _CommandError(Exception):
    """A failure reported as one line on stderr, without a traceback."""


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        prog='python3 -m crema.draw',
        description='Draw a network graph of a net prototxt.',
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('input_net_proto_file',
                        help='Input network prototxt file')
    parser.add_argument('output_image_file',
                        help='Output image file (format from its extension)')
    parser.add_argument('--rankdir', default='LR', choices=RANKDIRS,
                        help='Layout direction: TB (top-bottom, vertical), '
                             'LR (left-right), BT (bottom-top), RL '
                             '(right-left)')
    parser.add_argument('--phase', default='ALL',
                        choices=('TRAIN', 'TEST', 'ALL'),
                        help='Which phase of the net to draw; ALL draws '
                             'every layer regardless of phase')
    parser.add_argument('--display_lrm', action='store_true',
                        help='Show the learning rate and decay multipliers '
                             'of learnable layers')
    return parser.parse_args(argv)


def _read_text(path):
    try:
        with open(path, encoding='utf-8') as src:
            return src.read()
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) else str(err)
        raise _CommandError('cannot read %s: %s' % (path, reason)) from None


def read_net(path):
    """Read the prototxt at ``path`` into a NetParameter (text_format.Merge)."""
    text = _read_text(path)
    net = crema_pb2.NetParameter()
    try:
        text_format.Merge(text, net)
    except text_format.ParseError as err:
        # str(err) starts with "line:column : " when the position is known.
        message = re.sub(r'^\d+:\d+ : ', '', str(err))
        line, column = err.GetLine(), err.GetColumn()
        where = path if line is None else '%s:%d:%d' % (path, line, column)
        raise _CommandError('%s: cannot parse NetParameter: %s'
                            % (where, message)) from None
    return net


def _draw_to_file(args, net, phase):
    try:
        image = draw_net(net, args.rankdir, _image_format(args.output_image_file),
                         phase, args.display_lrm)
    except (RuntimeError, ValueError) as err:
        raise _CommandError('cannot draw %s: %s'
                            % (args.input_net_proto_file, err)) from None
    try:
        _write_file(args.output_image_file, image)
    except RuntimeError as err:
        raise _CommandError(str(err)) from None


def main(argv=None):
    """Run the command line; return its exit status (0 on success)."""
    args = _parse_args(argv)
    phase = None if args.phase == 'ALL' else crema_pb2.Phase.Value(args.phase)
    try:
        net = read_net(args.input_net_proto_file)
        print('Drawing net to %s' % args.output_image_file)
        _draw_to_file(args, net, phase)
    except _CommandError as err:
        # One line, whatever the underlying message looks like.
        print('crema.draw: error: %s' % ' '.join(str(err).split()),
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
