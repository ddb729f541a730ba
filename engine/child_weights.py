"""A node's selection utility recomputed from its children, weighted as KataGo weighs them.

With plain backups a node's utility is the mean of every leaf below it, so the visits a
child got while it still looked good keep dragging the parent down after the search has
found it bad. KataGo (`searchupdatehelpers.cpp: recomputeNodeStats`) instead recomputes a
node's averages from its children's, each child weighing its visits, adjusted twice:

- noise pruning (`noisePruneUtilityScale`): in the order the children were first visited, a
  child worse than the weighted mean of those before it loses part of the weight it has
  beyond twice its policy share of theirs, the more the worse it is;
- value weighting (`valueWeightExponent`): each weight is multiplied by F(z) ** exponent,
  where F is Student's t CDF with 3 degrees of freedom and z the child's utility above the
  weighted mean in units of 1 / sqrt(1.5 sqrt(weight)); the weights are then scaled back to
  their sum.

The node's own evaluation joins with weight 1. Only selection reads the result (tree.node_sel
and node_utility_sq); reported winrates, scores and the LCB stay plain means. Children come
in the order they were first visited (tree.attach_child), where KataGo sorts by policy.
"""

import numpy as np
from numba import njit

MIN_VARIANCE = 1e-8  # KataGo's floor on a child's pseudo-variance
MIN_CDF = 1e-4  # keeps every weight above zero


@njit(cache=True)
def t3_cdf(z):
    """Student's t CDF with 3 degrees of freedom (closed form)."""
    x = z / np.sqrt(3.0)
    return 0.5 + (x / (1.0 + x * x) + np.arctan(x)) / np.pi


@njit(cache=True)
def child_weights(utilities, weights, priors, count, value_exponent, prune_scale):
    """Adjust weights[:count] in place (noise pruning, then value weighting); returns their
    sum. utilities are the children's mean utilities from the chooser's view, weights start
    as their visits, priors are their policy priors; 0 turns either adjustment off."""
    total = 0.0
    if prune_scale > 0.0:
        u_sum = 0.0
        prior_sum = 0.0
        for i in range(count):
            w = weights[i]
            if total > 0.0 and prior_sum > 0.0:
                gap = u_sum / total - utilities[i]
                lenient = 2.0 * total * priors[i] / prior_sum
                if gap > 0.0 and w > lenient:
                    w -= (w - lenient) * (1.0 - np.exp(-gap / prune_scale))
                    weights[i] = w
            u_sum += utilities[i] * w
            total += w
            prior_sum += priors[i]
    else:
        for i in range(count):
            total += weights[i]
    if value_exponent <= 0.0 or total <= 0.0:
        return total
    mean = 0.0
    for i in range(count):
        mean += utilities[i] * weights[i]
    mean /= total
    new_total = 0.0
    for i in range(count):
        w = weights[i]
        stdev = np.sqrt(MIN_VARIANCE + 1.0 / (1.5 * np.sqrt(w)))
        w *= (t3_cdf((utilities[i] - mean) / stdev) + MIN_CDF) ** value_exponent
        weights[i] = w
        new_total += w
    scale = total / new_total
    for i in range(count):
        weights[i] *= scale
    return total


@njit(cache=True)
def gather(t, node, root_prior, is_root, value_exponent, prune_scale, scratch):
    """Put the node's visited children into scratch (float64 [4, A], A = actions): their
    mean utilities from the chooser's view (the node's side to move), their weights as
    child_weights adjusts them and their mean squared utilities. Returns (count, their visits,
    the adjusted weights' sum)."""
    utilities, weights, priors, squares = scratch[0], scratch[1], scratch[2], scratch[3]
    start = t.node_edge_start[node]
    count = 0
    visits = 0
    for j in range(start, start + t.node_num_children[node]):
        c = t.edge_child[j]
        n = t.node_visits[c]
        if n <= 0:
            continue
        utilities[count] = (t.node_sel[c, 1] + t.node_virtual[c]) / n
        squares[count] = t.node_utility_sq[c] / n
        weights[count] = n
        priors[count] = root_prior[t.edge_action[j]] if is_root else t.edge_prior[j]
        visits += n
        count += 1
    if count == 0:
        return count, visits, 0.0
    return count, visits, child_weights(utilities, weights, priors, count, value_exponent,
                                        prune_scale)


@njit(cache=True)
def children_mean(scratch, count, total):
    """The gathered children's weighted mean utility, from the chooser's view."""
    u_sum = 0.0
    for i in range(count):
        u_sum += scratch[1, i] * scratch[0, i]
    return u_sum / total


@njit(cache=True)
def combine(t, node, own_utility, count, total, scratch):
    """Set the node's selection utility sum and squared-utility sum from the gathered
    children and its own utility (mover's view), which weighs 1 and is added last (KataGo's
    order of summation)."""
    u_sum = 0.0
    sq_sum = 0.0
    for i in range(count):
        u_sum -= scratch[1, i] * scratch[0, i]
        sq_sum += scratch[1, i] * scratch[3, i]
    u_sum += own_utility
    sq_sum += own_utility * own_utility
    visits = t.node_visits[node]
    t.node_sel[node, 1] = u_sum / (1.0 + total) * visits - t.node_virtual[node]
    t.node_utility_sq[node] = sq_sum / (1.0 + total) * visits
