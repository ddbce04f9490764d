package nnsweeper.peers;

import java.util.Random;

import minesweeper.settings.GameSettings;
import minesweeper.settings.GameType;
import minesweeper.solver.bulk.BulkEventGame;
import minesweeper.solver.bulk.BulkEventMain;
import minesweeper.solver.bulk.BulkPlayer;
import minesweeper.solver.bulk.GamePostListener;
import minesweeper.solver.settings.PlayStyle;
import minesweeper.solver.settings.SettingsFactory;
import minesweeper.solver.settings.SettingsFactory.Setting;
import minesweeper.solver.settings.SolverSettings;

/**
 * The settings of the peer's reference bulk runs (its {@code MinesweeperBulk} main), in one place:
 * SMALL_ANALYSIS, the solver single-threaded, played without flags (NO_FLAG), a safe first click
 * at the game's start location (the corner). Its play does not depend on the machine: the limits
 * of SMALL_ANALYSIS are counts of nodes and layouts, not times.
 */
public final class PeerSettings {

    /** How the settings are described in nnsweeper's tables. */
    public static final String DESCRIPTION = "SMALL_ANALYSIS, single thread, NO_FLAG";

    private PeerSettings() {
    }

    /** A fresh copy of the solver settings of the reference runs. */
    public static SolverSettings solverSettings() {
        SolverSettings settings = SettingsFactory.GetSettings(Setting.SMALL_ANALYSIS);
        settings.setSingleThread(true);
        return settings;
    }

    /**
     * Plays the peer's own games as its bulk runner does: its {@code BulkPlayer} on its standard
     * games (safe first click) with the seeds its controller draws from {@code new Random(seed)}.
     * The games do not depend on the number of workers (the controller draws each game's seed in
     * order), so the first N games of a run are the same whatever N and however many workers.
     *
     * @param listener told of each game as it ends, in order (none when null)
     * @return {played, won, guesses, milliseconds}
     */
    public static long[] ownGames(int games, long seed, GameSettings board, int workers, GamePostListener listener) {
        BulkPlayer controller = new BulkPlayer(new Random(seed), games, GameType.STANDARD, board, solverSettings(),
                workers, 10000);
        controller.setPlayStyle(PlayStyle.NO_FLAG);
        controller.setReportInterval(0);
        if (listener != null) {
            controller.registerPostGameListener(listener);
        }
        long t0 = System.nanoTime();
        controller.run();
        BulkEventMain results = controller.getResults();
        while (results == null) { // the controller flags the end a moment before it keeps the final event
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                // the controller wakes the thread that runs it as the run ends: no cancellation
            }
            results = controller.getResults();
        }
        Thread.interrupted(); // that wake-up call, if it came after the run returned
        long millis = (System.nanoTime() - t0) / 1000000;
        BulkEventGame event = results.getGameEvents()[0];
        return new long[] {event.getGamesPlayed(), event.getGamesWon(), event.getTotalGuesses(), millis};
    }
}
