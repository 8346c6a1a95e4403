#pragma once
// PBG's scoring functions and margin ranking loss over one chunk of edges, with hand-derived
// gradients. Both corruption sides reduce to one form: queries q_i, candidates x_n, and the
// positive of query i is candidate i (the chunk's own edges come first among the candidates, then
// the uniform negatives). Corrupting the target: q_i = s_i (+ r_i), candidates are the chunk's
// targets; corrupting the source: q_i = t_i (- r_i), candidates are the chunk's sources.
#include <string>

namespace gnnbed {

enum class Scoring {
  dot,          // f(q, x) = q . x
  translation,  // f(q, x) = -||q - x||  (TransE: q = s + r)
};

Scoring scoring_from_name(const std::string& name);

// scores[i * num_candidates + n] = f(queries row i, candidates row n); rows are `dimension` wide.
void pairwise_scores(Scoring scoring, const float* queries, int num_queries,
                     const float* candidates, int num_candidates, int dimension, float* scores);

// The chunk's loss: sum over queries i and candidates n != i of max(0, margin - f(q_i, x_i) +
// f(q_i, x_n)), as PBG's "ranking" loss with reduction sum. Writes the loss's gradient with
// respect to every query (num_queries x dimension) and every candidate (num_candidates x
// dimension), overwriting. num_queries <= num_candidates.
double ranking_loss(Scoring scoring, const float* queries, int num_queries, const float* candidates,
                    int num_candidates, int dimension, double margin, float* query_gradient,
                    float* candidate_gradient);

}  // namespace gnnbed
