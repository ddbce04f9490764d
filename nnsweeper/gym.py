"""Minesweeper as a Gymnasium environment: ``nnsweeper/Minesweeper-v0``.

Importing this module registers the environment (it needs the ``gym`` extra,
``pip install "nnsweeper[gym]"``)::

    import gymnasium as gym
    import nnsweeper.gym  # noqa: F401  (registers nnsweeper/Minesweeper-v0)

    env = gym.make("nnsweeper/Minesweeper-v0", rows=16, cols=30, mines=99)
    obs, info = env.reset(seed=3)          # the game of MinesweeperEnv(16, 30, 99, seed=3)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample(mask=obs["action_mask"]))

``gym.make("nnsweeper.gym:nnsweeper/Minesweeper-v0", ...)`` imports the module itself.
The game underneath is :class:`nnsweeper.MinesweeperEnv` (``env.unwrapped.game``), so a
seed gives the same layout as everywhere else in nnsweeper, and :func:`play_solver`
lets any nnsweeper solver play through the Gymnasium interface.
``env.get_wrapper_attr("action_masks")()`` (the method sb3-contrib's ``MaskablePPO``
calls, so it trains on the environment as it is: see docs/rl.md) gives the legal moves.
"""

from __future__ import annotations

import numbers

import gymnasium
import numpy as np
from gymnasium import spaces

from nnsweeper.errors import InvalidRulesError
from nnsweeper.game import PRESETS, MinesweeperEnv, Rules

__all__ = ["ENV_ID", "MinesweeperGymEnv", "play_solver"]

ENV_ID = "nnsweeper/Minesweeper-v0"

#: Pixels per cell side in ``rgb_array`` frames.
CELL_PIXELS = 16
#: Colours of rgb_array frames: covered cells, revealed cells, the grid lines, the mine
#: that ended a game, and the numbers 1..8 (the classic game's).
_COVERED = (160, 160, 160)
_REVEALED = (224, 224, 224)
_GRID = (120, 120, 120)
_EXPLODED = (220, 40, 40)
_NUMBER = [(0, 0, 0), (25, 25, 230), (20, 130, 20), (220, 30, 30), (20, 20, 130), (130, 20, 20),
           (20, 130, 130), (0, 0, 0), (100, 100, 100)]


class MinesweeperGymEnv(gymnasium.Env):
    """Minesweeper with the Gymnasium API.

    Parameters
    ----------
    rows, cols, mines : int, default 9, 9, 10
        The board (beginner by default).
    preset : {"beginner", "intermediate", "expert"}, optional
        A named board instead of ``rows``, ``cols`` and ``mines``.
    first_click : {"safe", "zero", "none", "no-guess", "no-guess-fast"}, default "safe"
        The first-click rule (:class:`nnsweeper.Rules`).
    max_steps : int, optional
        Steps after which an episode is truncated (default: twice the cells, so that an
        agent repeating invalid actions cannot run forever).
    render_mode : {"ansi", "rgb_array"}, optional

    Observation space
    -----------------
    ``Dict(board=Box(-1, 8, (rows, cols), int8), action_mask=MultiBinary(rows * cols))``:
    the visible board (-1 covered, 0..8 revealed; a mine is never shown) and 1 for
    every covered cell, the cells it is useful to reveal.

    Action space
    ------------
    ``Discrete(rows * cols)``: reveal the cell ``row * cols + col``. Flags are not
    actions: they change nothing the rules check.

    Rewards
    -------
    Revealing safe cells: the share of the board's safe cells it opened (flood fill
    included), so a won game's rewards add up to a little under 2; the winning move:
    1; revealing a mine: -1; revealing a cell already revealed (masked out): 0, and
    ``info["invalid"]`` is True. These are :class:`nnsweeper.MinesweeperEnv`'s.

    Episode end
    -----------
    Terminated when every safe cell is revealed (``info["result"] == "win"``) or a
    mine is revealed (``"lose"``); truncated after ``max_steps`` steps.

    Info
    ----
    ``moves`` (cells revealed so far), ``revealed`` (cells this step opened),
    ``game_seed`` (the :class:`MinesweeperEnv` seed of the episode), ``invalid``, and
    ``result`` once the game is over.

    Action masks
    ------------
    :meth:`action_masks` returns the observation's ``action_mask`` as booleans: the
    method that sb3-contrib's ``MaskablePPO`` looks for, found through ``gym.make``'s
    wrappers and vector environments without an ``ActionMasker``.

    Seeding
    -------
    ``reset(seed=s)`` plays the game of ``MinesweeperEnv(rows, cols, mines, seed=s)``;
    ``reset()`` without a seed draws the next game's seed from the environment's
    generator, so the games after a seeded reset repeat too.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, rows: int = 9, cols: int = 9, mines: int = 10, *, preset: str | None = None,
                 first_click: str = "safe", max_steps: int | None = None, render_mode: str | None = None):
        if preset is not None:
            if preset not in PRESETS:
                raise InvalidRulesError(f"preset must be one of {', '.join(PRESETS)}; got {preset!r}")
            rows, cols, mines = PRESETS[preset]
        self.rules = Rules(rows, cols, mines, first_click)
        cells = self.rules.cells
        if max_steps is None:
            max_steps = 2 * cells
        if isinstance(max_steps, bool) or not isinstance(max_steps, numbers.Integral) or max_steps < 1:
            raise InvalidRulesError(f"max_steps must be a positive integer; got {max_steps!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise InvalidRulesError(f"render_mode must be None, 'ansi' or 'rgb_array'; got {render_mode!r}")
        self.max_steps = int(max_steps)
        self.render_mode = render_mode
        shape = (self.rules.rows, self.rules.cols)
        self.observation_space = spaces.Dict({
            "board": spaces.Box(low=-1, high=8, shape=shape, dtype=np.int8),
            "action_mask": spaces.MultiBinary(cells),
        })
        self.action_space = spaces.Discrete(cells)
        self.game: MinesweeperEnv | None = None
        self._steps = 0

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        # A seed names the game (as MinesweeperEnv's does); without one the next game's
        # seed comes from the environment's own generator.
        game_seed = int(seed) if seed is not None else int(self.np_random.integers(2**63 - 1))
        r = self.rules
        self.game = MinesweeperEnv(r.rows, r.cols, r.mines, seed=game_seed, first_click=r.first_click)
        self._steps = 0
        return self._observation(), {"game_seed": game_seed, "moves": 0, "revealed": 0, "invalid": False}

    def step(self, action):
        if self.game is None:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        if not self.action_space.contains(action):
            raise gymnasium.error.InvalidAction(
                f"action must be an integer in [0, {self.action_space.n}); got {action!r}")
        if self.game.done:
            raise gymnasium.error.ResetNeeded(f"the episode is over ({self.game.result}); call reset()")
        self._steps += 1
        i, j = divmod(int(action), self.rules.cols)
        info = {"game_seed": self.game.seed, "moves": self.game.moves, "revealed": 0, "invalid": False}
        if self.game.mask[i, j] == 0:
            info["invalid"] = True
            reward, terminated = 0.0, False
        else:
            _, reward, terminated, step_info = self.game.reveal(i, j)
            info.update(step_info)
        truncated = not terminated and self._steps >= self.max_steps
        return self._observation(), float(reward), bool(terminated), truncated, info

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() needs a render_mode: 'ansi' or 'rgb_array'")
            return None
        if self.game is None:
            raise gymnasium.error.ResetNeeded("call reset() before render()")
        if self.render_mode == "ansi":
            return self._ansi()
        return self._rgb()

    def action_masks(self) -> np.ndarray:
        """The actions worth taking now: True for every covered cell.

        The observation's ``action_mask`` as booleans, under the name that sb3-contrib's
        ``MaskablePPO`` (and other maskable agents) call, so that no ``ActionMasker``
        wrapper is needed: they reach it through Gymnasium's wrappers with
        ``env.get_wrapper_attr("action_masks")`` and through a vector environment with
        ``env_method("action_masks")``.

        Returns
        -------
        numpy.ndarray
            Shape ``(rows * cols,)``, dtype bool: ``mask[row * cols + col]`` is True when
            the cell is covered (revealing it is a real move), False when it is revealed
            (the step would be ``info["invalid"]``).

        Raises
        ------
        gymnasium.error.ResetNeeded
            Before the first ``reset()``.
        """
        if self.game is None:
            raise gymnasium.error.ResetNeeded("call reset() before action_masks()")
        return self.game.observe().ravel() < 0

    # ------------------------------------------------------------ internals
    def _observation(self) -> dict:
        grid = self.game.observe()
        return {"board": grid.astype(np.int8), "action_mask": (grid.ravel() < 0).astype(np.int8)}

    def _ansi(self) -> str:
        from nnsweeper.boardtext import format_board

        rows = format_board(self.game.observe()).splitlines()  # "." covered, digits, one space apart
        if self.game.exploded is not None:
            i, j = self.game.exploded
            rows[i] = rows[i][:2 * j] + "*" + rows[i][2 * j + 1:]
        status = self.game.result or ("in play" if self.game.placed else "new")
        return "\n".join(rows) + f"\n{self.rules.mines} mines, {self.game.moves} moves, {status}\n"

    def _rgb(self) -> np.ndarray:
        from PIL import Image, ImageDraw

        grid = self.game.observe()
        r, c = grid.shape
        s = CELL_PIXELS
        image = Image.new("RGB", (c * s + 1, r * s + 1), _GRID)
        draw = ImageDraw.Draw(image)
        for i in range(r):
            for j in range(c):
                box = (j * s + 1, i * s + 1, (j + 1) * s - 1, (i + 1) * s - 1)
                v = int(grid[i, j])
                colour = _EXPLODED if self.game.exploded == (i, j) else (_COVERED if v < 0 else _REVEALED)
                draw.rectangle(box, fill=colour)
                if v > 0:
                    draw.text((j * s + s // 2, i * s + s // 2), str(v), fill=_NUMBER[v], anchor="mm")
        return np.asarray(image, dtype=np.uint8)


def play_solver(solver, env, *, seed: int | None = None, rng=None) -> tuple[bool, float, int]:
    """Play one episode of a Gymnasium env with an nnsweeper solver; (won, total reward, steps).

    Each step the solver sees only the observation's board (as a typed position, through
    :func:`nnsweeper.suggest_move`) and its move is sent as the action. ``solver`` is a
    registered name or a solver; ``rng`` seeds its random choices (default: ``seed``).
    """
    from nnsweeper.observation import Observation
    from nnsweeper.solvers import get_solver
    from nnsweeper.solvers.suggest import suggest_move

    solver = get_solver(solver) if isinstance(solver, str) else solver
    obs, info = env.reset(seed=seed)
    rules = env.unwrapped.rules
    rng = np.random.default_rng(seed if rng is None else rng)
    total, steps, terminated, truncated = 0.0, 0, False, False
    while not (terminated or truncated):
        move = suggest_move(solver, Observation.of(obs["board"], rules.mines), rng)
        obs, reward, terminated, truncated, info = env.step(move.cell[0] * rules.cols + move.cell[1])
        total += reward
        steps += 1
    return info.get("result") == "win", total, steps


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="nnsweeper.gym:MinesweeperGymEnv")
