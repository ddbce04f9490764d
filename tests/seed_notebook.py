"""The seed notebook's solver code, reproduced unchanged as a test fixture.

The project's contract says the seed notebook's solver functions run unchanged on
:class:`nnsweeper.MinesweeperEnv`. To check that, this module reproduces the
notebook's single-point solver and CSP solver (with the helpers they call) exactly
as the notebook has them; ``tests/test_game.py`` runs them on seeded games. It is
a compatibility fixture, not part of the library: keep it as it is.
"""
# ruff: noqa: E501, F841, B007, W291, W293, I001, UP028

# Imports: NumPy, collections (the notebook's matplotlib import is not needed here)

import numpy as np
from collections import deque

# Picks first move (which is safe); this function is reused for the NN logic and the next (CSP) solver for consistency when comparing. 
def first_click_index(env):
    i, j = env.r // 2, env.c // 2  
    return env._flat(i, j)

# Returns all neighbor coordinates using "yield"
def neighbors(env, i, j):
    for x, y in env._neighbors(i, j):
        yield x, y

# As in the GNN, this function pulls all of the cells that would be visible to the player, i.e. places you can use logic to find mines.
def frontier_cells(env):
    cov = (env.mask == 1)
    rev = ~cov
    F = set()
    for i in range(env.r):
        for j in range(env.c):
            if rev[i, j] and env._counts[i, j] > 0:
                for x, y in neighbors(env, i, j):
                    if env.mask[x, y] == 1:
                        F.add((x, y))
    return F

# Body of the single-point solver
def solve_single_point(env, rng):
    # Reset environment to replay and compile winrates
    env.reset()
    obs, r, done, info = env.step(first_click_index(env))
    flags = set()
    while not done:
        progress = False
    # Finds mines and safe cells, whereas the NN algo only digs
        to_flag = set()
        to_click = set()

    # Loop over all cells
        for i in range(env.r):
            for j in range(env.c):
    # Check if revealed to user and in frontier
                if env.mask[i, j] == 0 and env._counts[i, j] > 0:
                    cov = [(x, y) for x, y in neighbors(env, i, j) if env.mask[x, y] == 1 and (x, y) not in flags]
                    f_cnt = sum((x, y) in flags for x, y in neighbors(env, i, j))
                    need = env._counts[i, j] - f_cnt
                    if need < 0:  
                        continue
                    if need == 0 and cov:
    # Checks if all covered neighbors are safe
                        to_click.update(cov)
                    elif need == len(cov) and len(cov) > 0:
    # Checks if all covered neighbors include mines
                        to_flag.update(cov)
    # Actions: flag mines and click nonmines
        if to_flag:
            flags.update(to_flag)
            progress = True
        if to_click:
            for (x, y) in list(to_click):
                if env.mask[x, y] == 1:
                    obs, r, done, info = env.step(env._flat(x, y))
                    if done:
                        break
            progress = True
            if done:
                break
    # Random guess if no deterministic moves, or break the loop if there is an error and no moves are available.
        if not progress:
            F = [xy for xy in frontier_cells(env) if xy not in flags]
            if not F:
                F = [(i, j) for i in range(env.r) for j in range(env.c) if env.mask[i, j] == 1 and (i, j) not in flags]
            if not F:
                break
            x, y = F[rng.integers(len(F))]
            obs, r, done, info = env.step(env._flat(x, y))

    return info.get("result") == "win"

# Creates connected components of frontier cells via shared constraints

def componentize(env, F):
    """Split frontier into connected components via shared numbered neighbors."""
    F_list = list(F)
    idx = {xy: k for k, xy in enumerate(F_list)}
    adj = [set() for _ in F_list]
    for i in range(env.r):
        for j in range(env.c):
            if env.mask[i, j] == 0 and env._counts[i, j] > 0:
                comp = [(x, y) for x, y in neighbors(env, i, j) if env.mask[x, y] == 1 and (x, y) in idx]
                for a in comp:
                    for b in comp:
                        if a != b:
                            adj[idx[a]].add(idx[b])
    comps = []
    seen = set()
    for k in range(len(F_list)):
        if k in seen:
            continue
    # Use a double queue to backtrack through variables
        q = deque([k])
        seen.add(k)
        cur = [k]
        while q:
            u = q.popleft()
            for v in adj[u]:
                if v not in seen:
                    seen.add(v)
                    q.append(v)
                    cur.append(v)
        comps.append([F_list[t] for t in cur])
    return comps

# Main part: checks feasibility, prunes, and backtracks to count solutions
def enumerate_solutions(variables, constraints, limit=100000):
    """
    variables: list of variable ids [0,...V-1]
    constraints: list of (vars_idx_list, sum_needed)
    Return: count_solutions, mine_counts_per_var (length V)
    """
    V = len(variables)
    cons_vars = [list(vs) for (vs, s) in constraints]
    cons_need = [int(s) for (vs, s) in constraints]

    order = sorted(range(V), key=lambda v: sum(v in vs for vs in cons_vars), reverse=True)  # heuristic
    assign = [None] * V
    sol_count = 0
    mine_count = np.zeros(V, dtype=np.int64)
    var_to_cons = [[] for _ in range(V)]
    for ci, vs in enumerate(cons_vars):
        for v in vs:
            var_to_cons[v].append(ci)

    def feasible(ci):
        """Check quick bounds for constraint ci."""
        vs = cons_vars[ci]
        need = cons_need[ci]
        min_left = 0
        max_left = 0
        for v in vs:
            if assign[v] is None:
                max_left += 1
            elif assign[v] == 1:
                need -= 1
        return 0 <= need <= max_left

    def backtrack(t):
        nonlocal sol_count
        if sol_count >= limit:
            return
        if t == V:
            for ci, vs in enumerate(cons_vars):
                need = cons_need[ci]
                s = sum(assign[v] == 1 for v in vs)
                if s != need:
                    return
            sol_count += 1
            for v in range(V):
                if assign[v] == 1:
                    mine_count[v] += 1
            return
        v = order[t]
        for val in (0, 1):
            assign[v] = val
            ok = True
            for ci in var_to_cons[v]:
                if not feasible(ci):
                    ok = False
                    break
            if ok:
                backtrack(t + 1)
            assign[v] = None

    for ci in range(len(cons_vars)):
        if not feasible(ci):
            return 0, mine_count
    backtrack(0)
    return sol_count, mine_count

def csp_step(env, rng):
    """One CSP-driven step. Returns (moved, done)."""
    F = frontier_cells(env)
    if not F:
    # Clicks random if no frontier. Else, clicks all minimum mine probability cell.
        cov = [(i, j) for i in range(env.r) for j in range(env.c) if env.mask[i, j] == 1]
        if not cov:
            return False, True
        x, y = cov[rng.integers(len(cov))]
        _, _, done, _ = env.step(env._flat(x, y))
        return True, done
    
    # In some cases there are multiple guaranteed nonmines -- clicks those at once
    best_xy = None
    best_p = 1.1
    for comp in componentize(env, F):
        vars_list = list(comp)
        constraints = []
        # Build constraints referencing only comp vars
        idx = {xy: k for k, xy in enumerate(vars_list)}
        for i in range(env.r):
            for j in range(env.c):
                if env.mask[i, j] == 0 and env._counts[i, j] > 0:
                    neigh = [(x, y) for x, y in neighbors(env, i, j) if env.mask[x, y] == 1 and (x, y) in idx]
                    if not neigh:
                        continue
                    constraints.append(([idx[xy] for xy in neigh], env._counts[i, j]))
        if not constraints:
            x, y = comp[rng.integers(len(comp))]
            _, _, done, _ = env.step(env._flat(x, y))
            return True, done

        sol_count, mine_count = enumerate_solutions(vars_list, constraints, limit=200000)
        if sol_count > 0:
            probs = mine_count / sol_count
            # Safe cell check
            safe_idxs = np.where(probs == 0)[0]
            if safe_idxs.size > 0:
                for si in safe_idxs:
                    x, y = vars_list[int(si)]
                    if env.mask[x, y] == 1:
                        _, _, done, _ = env.step(env._flat(x, y))
                        if done:
                            return True, True
                return True, False
            k = int(np.argmin(probs))
            if probs[k] < best_p:
                best_p = float(probs[k])
                best_xy = vars_list[k]
        else:
            x, y = comp[rng.integers(len(comp))]
            _, _, done, _ = env.step(env._flat(x, y))
            return True, done

    if best_xy is not None:
        x, y = best_xy
        _, _, done, _ = env.step(env._flat(x, y))
        return True, done

    # Fallback: random click
    cov = [(i, j) for i in range(env.r) for j in range(env.c) if env.mask[i, j] == 1]
    if cov:
        x, y = cov[rng.integers(len(cov))]
        _, _, done, _ = env.step(env._flat(x, y))
        return True, done
    return False, True

def solve_csp(env, rng):
    env.reset()
    _, _, done, info = env.step(first_click_index(env))
    while not done:
        moved, done = csp_step(env, rng)
        if not moved:
            break
    return info.get("result") == "win" or (done and getattr(env, "explosion", False) is False and np.all(env.mask[env.board != -1] == 0))

