package nnsweeper.peers;

import java.util.Collection;
import java.util.List;
import java.util.zip.CRC32;

import minesweeper.gamestate.GameStateModel;
import minesweeper.gamestate.GameStateModelViewer;
import minesweeper.settings.GameSettings;
import minesweeper.structure.Action;
import minesweeper.structure.Location;

/**
 * A game of the peer's whose mines are a given layout: one of nnsweeper's games.
 *
 * <p>It plays as the peer's own standard game (a safe first click, mines placed at the
 * first clear, flood fill through {@code explode}, chording, the 3BV count), except that the
 * mines are the layout it was given rather than
 * a shuffle of its random generator. A layout is given by its mine tiles, {@code tile = y *
 * width + x} with x the column and y the row: nnsweeper's flat index {@code row * cols + col}.
 * The layout is checked when the game is made (mine count, tiles on the board and distinct,
 * the expected first click free of mines), and the first clear must be at that cell: a game
 * refuses any other, since its layout was drawn for that first click.</p>
 */
public final class LayoutGameState extends GameStateModelViewer {

    /** Mine or number per cell, as the peer's standard game keeps it: [x][y]. */
    private final int[][] board;
    private final int[] mineTiles;
    private final Location start;
    private final int index;
    /** Every action the player asked for, "x,y,action,certain" each, ';' between (see {@link #moves()}). */
    private final StringBuilder moves = new StringBuilder();

    /**
     * @param settings  the board (width = columns, height = rows, mines)
     * @param index     the game's place in its run (for messages)
     * @param gameSeed  nnsweeper's seed of the game (for messages and the peer's getSeed)
     * @param mineTiles the mines, each {@code y * width + x}
     * @param start     the first click the layout was drawn for
     * @throws IllegalArgumentException a layout that breaks a rule, naming the game and the value
     */
    public LayoutGameState(GameSettings settings, int index, long gameSeed, int[] mineTiles, Location start) {
        super(settings, gameSeed);
        this.index = index;
        this.start = start;
        this.mineTiles = mineTiles.clone();
        this.board = new int[width][height];
        String game = "game " + index + " (seed " + gameSeed + ")";
        if (start.x < 0 || start.x >= width || start.y < 0 || start.y >= height) {
            throw new IllegalArgumentException(game + ": the first click " + start + " must be on the "
                    + width + "x" + height + " board");
        }
        if (mineTiles.length != mines) {
            throw new IllegalArgumentException(game + ": a layout must hold " + mines + " mines; got "
                    + mineTiles.length);
        }
        boolean[] seen = new boolean[width * height];
        for (int tile : mineTiles) {
            if (tile < 0 || tile >= width * height) {
                throw new IllegalArgumentException(game + ": a mine tile must be in [0, " + (width * height)
                        + "); got " + tile);
            }
            if (seen[tile]) {
                throw new IllegalArgumentException(game + ": the mine tiles must differ; " + tile
                        + " is given twice");
            }
            seen[tile] = true;
        }
        if (seen[start.y * width + start.x]) {
            throw new IllegalArgumentException(game + ": the first click " + start
                    + " holds a mine; the layout must keep it safe");
        }
    }

    /** The game's place in its run. */
    public int getIndex() {
        return index;
    }

    /**
     * CRC-32 of the board the peer played, row by row (y), each row by column (x), one signed
     * byte per cell: -1 for a mine, else the number of neighbouring mines. nnsweeper's
     * {@code Game.board} (int8, rows x cols) gives the same bytes for the same game. -1 before
     * the first clear has placed the mines.
     */
    public long boardCrc() {
        if (getGameState() == GameStateModel.NOT_STARTED) {
            return -1;
        }
        CRC32 crc = new CRC32();
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                crc.update(board[x][y] == GameStateModel.MINE ? -1 : board[x][y]);
            }
        }
        return crc.getValue();
    }

    /**
     * The board the peer played as text, row by row (y), each row by column (x): '*' for a mine,
     * else the number of neighbouring mines; empty before the first clear has placed the mines.
     */
    public String cells() {
        if (getGameState() == GameStateModel.NOT_STARTED) {
            return "";
        }
        StringBuilder text = new StringBuilder(width * height);
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                text.append(board[x][y] == GameStateModel.MINE ? '*' : (char) ('0' + board[x][y]));
            }
        }
        return text.toString();
    }

    /**
     * The actions the player asked for, in order: "x,y,action,certain" each (action the peer's
     * {@code Action} code: 1 clear, 2 clear around, 3 flag; certain 1 when the player knew the
     * cell was safe, 0 for a guess), ';' between them.
     */
    public String moves() {
        return moves.toString();
    }

    /** Records the action, then plays it as every game state of the peer's does. */
    @Override
    public boolean doAction(Action a) {
        if (moves.length() > 0) {
            moves.append(';');
        }
        moves.append(a.x).append(',').append(a.y).append(',').append(a.getAction()).append(',')
                .append(a.isCertainty() ? 1 : 0);
        return super.doAction(a);
    }

    /** The first clear places the layout, as the standard game places its shuffled mines then. */
    @Override
    protected void startHandle(Location m) {
        if (!m.equals(start)) {
            throw new IllegalStateException("game " + index + " (seed " + seed + "): the first clear is at "
                    + m + "; its layout was drawn for a first click at " + start);
        }
        for (int tile : mineTiles) {
            int x = tile % width;
            int y = tile / width;
            board[x][y] = GameStateModel.MINE;
            // tell all the surrounding squares they are next to a mine (as GameStateStandard does)
            for (int j = 0; j < DX.length; j++) {
                if (x + DX[j] >= 0 && x + DX[j] < width && y + DY[j] >= 0 && y + DY[j] < height) {
                    if (board[x + DX[j]][y + DY[j]] != GameStateModel.MINE) {
                        board[x + DX[j]][y + DY[j]]++;
                    }
                }
            }
        }
    }

    @Override
    public Location getStartLocation() {
        return start;
    }

    @Override
    public boolean safeOpening() {
        return true;
    }

    @Override
    public boolean supports3BV() {
        return true;
    }

    @Override
    protected void placeFlagHandle(Location m) {
    }

    @Override
    protected int queryHandle(int x, int y) {
        return board[x][y];
    }

    @Override
    protected boolean clearSquareHitMine(Location m) {
        if (board[m.x][m.y] == 0) {
            explode(m);
        }
        return board[m.x][m.y] == GameStateModel.MINE;
    }

    @Override
    protected boolean clearSurroundHandle(Location m) {
        for (int j = 0; j < DX.length; j++) {
            if (m.x + DX[j] >= 0 && m.x + DX[j] < width && m.y + DY[j] >= 0 && m.y + DY[j] < height) {
                clearSquare(new Location(m.x + DX[j], m.y + DY[j]));
            }
        }
        return true;
    }

    /**
     * Refused: the peer's game states answer this from the hidden board ("cheating", in their
     * own words), and a benchmark's player never reads the layout.
     */
    @Override
    public List<Action> identifyLocations(Collection<? extends Location> locs) {
        throw new UnsupportedOperationException(showGameKey() + ": the layout is never shown to the player");
    }

    /** Refused, as {@link #identifyLocations}: the benchmark's player never reads the layout. */
    @Override
    public int privilegedQuery(Location m, boolean showMines) {
        throw new UnsupportedOperationException(showGameKey() + ": the layout is never shown to the player");
    }

    @Override
    public String showGameKey() {
        return "nnsweeper game " + index + ", seed " + seed;
    }
}
