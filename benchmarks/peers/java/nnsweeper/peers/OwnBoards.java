package nnsweeper.peers;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import minesweeper.gamestate.GameStateModel;
import minesweeper.settings.GameSettings;
import minesweeper.solver.bulk.BulkRequest;
import minesweeper.solver.bulk.BulkRequestGame;
import minesweeper.solver.bulk.GamePostListener;
import minesweeper.structure.Action;
import minesweeper.structure.Location;

/**
 * The peer's bulk runner on its own boards, with the settings of its reference runs, one worker.
 *
 * <p>Usage: {@code OwnBoards GAMES SEED WIDTH HEIGHT MINES [LAYOUTS RESULTS]}. Prints one line:
 * {@code played P won W guesses G millis T}. With LAYOUTS and RESULTS it also writes the games'
 * layouts (mines read back from its own game states when they end) as a layout file that
 * {@link PlayLayouts} plays, and how each game ended ({@code INDEX STATE GUESSES}, in order), so
 * that the same games can be played again through the adapter's game state and compared.</p>
 */
public final class OwnBoards {

    private OwnBoards() {
    }

    /** Each game's layout and end, in order. */
    static final class Recorder extends GamePostListener {
        private final List<String> layouts = new ArrayList<>();
        private final List<String> ends = new ArrayList<>();

        @Override
        public synchronized void postAction(BulkRequest request) {
            BulkRequestGame game = request.getRequestGames()[0];
            GameStateModel gs = game.getGame();
            int k = layouts.size();
            List<Location> all = new ArrayList<>();
            for (int y = 0; y < gs.getHeight(); y++) {
                for (int x = 0; x < gs.getWidth(); x++) {
                    all.add(new Location(x, y));
                }
            }
            StringBuilder line = new StringBuilder().append(k).append(' ').append(gs.getSeed());
            for (Action a : gs.identifyLocations(all)) { // the standard game names each mine as a flag
                if (a.getAction() == Action.FLAG) {
                    line.append(' ').append(a.y * gs.getWidth() + a.x);
                }
            }
            layouts.add(line.toString());
            ends.add(k + " " + gs.getGameState() + " " + game.getGuesses());
            notifyAll();
        }

        @Override
        public void postResults() {
        }

        synchronized void waitFor(int games) {
            while (layouts.size() < games) {
                try {
                    wait(1000);
                } catch (InterruptedException e) {
                    // the controller's wake-up call as the run ends: no cancellation
                }
            }
        }
    }

    public static void main(String[] args) throws IOException {
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
            System.err.println("nnsweeper.peers.OwnBoards: " + thread.getName() + " failed: " + e);
            e.printStackTrace();
            Runtime.getRuntime().halt(3);
        });
        if (args.length != 5 && args.length != 7) {
            System.err.println("nnsweeper.peers.OwnBoards: usage: OwnBoards GAMES SEED WIDTH HEIGHT MINES "
                    + "[LAYOUTS RESULTS]");
            Runtime.getRuntime().halt(3);
        }
        int games = Integer.parseInt(args[0]);
        long seed = Long.parseLong(args[1]);
        GameSettings board = GameSettings.create(Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                Integer.parseInt(args[4]));
        Recorder recorder = args.length == 7 ? new Recorder() : null;
        long[] r = PeerSettings.ownGames(games, seed, board, 1, recorder);
        if (recorder != null) {
            recorder.waitFor(games);
            try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(args[5]), StandardCharsets.UTF_8))) {
                out.print("nnsweeper-layouts 1\nboard " + board.width + " " + board.height + " " + board.mines
                        + "\nstart 0 0\ngames " + games + "\n" + String.join("\n", recorder.layouts) + "\n");
            }
            try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(args[6]), StandardCharsets.UTF_8))) {
                out.print(String.join("\n", recorder.ends) + "\n");
            }
        }
        System.out.println("played " + r[0] + " won " + r[1] + " guesses " + r[2] + " millis " + r[3]);
        System.exit(0);
    }
}
